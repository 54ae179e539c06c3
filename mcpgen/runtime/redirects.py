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


def address_kind(address: str) -> str:
    """``public``, ``link-local`` (and ``METADATA``), ``loopback`` (and the unspecified
    address) or ``private`` (any other that is not global); for an IPv4-mapped or 6to4
    IPv6 address, the kind of the IPv4 address in it."""
    ip = ipaddress.ip_address(address)
    ip = getattr(ip, "ipv4_mapped", None) or getattr(ip, "sixtofour", None) or ip
    if ip.is_link_local or str(ip) in METADATA:
        return "link-local"
    if ip.is_global:
        return "public"
    return "loopback" if ip.is_loopback or ip.is_unspecified else "private"


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
