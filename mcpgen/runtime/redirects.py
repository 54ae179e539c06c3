"""Whether a redirect (or a 202's ``Location``) off the wrapped API's origin may be followed:
not into an address of the server's own networks (loopback, link-local such as cloud
metadata, private) unless the API's own host is of that kind (docs/security.md,
"Redirects"). Names are resolved here and again by the HTTP client: DNS rebinding remains.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import anyio
import httpx2

from .wire import origin

# cloud metadata services outside 169.254/16 (AWS's IPv6 one, Alibaba's): kin to link-local
METADATA = frozenset({"fd00:ec2::254", "100.100.100.200"})
# IPv6 addresses whose last 32 bits are the IPv4 address reached through a translator or the
# host's own stack: IPv4-mapped, NAT64's well-known and local-use prefixes (RFC 6052's /96
# format, RFC 8215), IPv4-compatible (RFC 4291, deprecated) and IPv4-translated (SIIT)
LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
LAST_32 = "::ffff:0:0/96", "64:ff9b::/96", "::/96", "::ffff:0:0:0/96"
EMBEDDING = [LOCAL_NAT64, *(ipaddress.IPv6Network(net) for net in LAST_32)]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def address_kind(address: str) -> str:
    """``public``, ``link-local`` (and ``METADATA``), ``loopback`` (and the unspecified
    address) or ``private`` (any other that is not global); for an IPv6 address embedding
    an IPv4 address (``EMBEDDING``, 6to4, Teredo's client), the kind of that IPv4 address,
    but a local-use NAT64 address is private at most (the operator may put the IPv4 address
    elsewhere than in the last 32 bits)."""
    ip = ipaddress.ip_address(address)
    reached = _embedded(ip)
    if reached.is_link_local or str(reached) in METADATA:
        return "link-local"
    if reached.is_global:
        return "private" if ip in LOCAL_NAT64 else "public"
    return "loopback" if reached.is_loopback or reached.is_unspecified else "private"


def _embedded(ip: Address) -> Address:
    """The IPv4 address that IPv6 address ``ip`` leads to, or ``ip``."""
    if isinstance(ip, ipaddress.IPv4Address) or int(ip) <= 1:  # ``::`` and ``::1`` are v6's
        return ip
    if ip.teredo:
        return ip.teredo[1]
    if any(ip in net for net in EMBEDDING):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour or ip


async def _kinds(host: str) -> dict[str, str]:
    """Each address ``host`` is or resolves to, with its kind; none if it does not resolve."""
    try:
        found = await anyio.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return {}
    return {str(info[4][0]): address_kind(str(info[4][0])) for info in found}


async def refused(api: str, url: str) -> str | None:
    """Why ``url`` may not be followed, or None: it is on another origin than the API's
    base URL ``api`` and its host is or resolves to an address that is not public and of a
    kind no address of the API's own host is."""
    if origin(url) == origin(api):
        return None
    host = httpx2.URL(url).raw_host.decode()  # as the client connects: [fe80::1%25lo] is %lo
    # a name that does not resolve: connecting fails too, or a proxy resolves it and decides
    inside = {address: kind for address, kind in (await _kinds(host)).items() if kind != "public"}
    home = set((await _kinds(urlsplit(api).hostname or "")).values()) if inside else set()
    for address, kind in inside.items():
        if kind not in home:
            return f"{host} is a {kind} address ({address}), and the API's host is not"
    return None
