"""Following the wrapped API's redirects by hand (``follow``): one to another origin (scheme,
host, port) drops every credential, and is refused into an address of the server's own
networks (loopback, link-local such as cloud metadata, private) unless the API's own host
is of that kind (docs/security.md, "Redirects"; a 202's ``Location`` too). Names are
resolved here and again by the HTTP client: DNS rebinding remains.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2

from . import capped, telemetry
from .errors import ToolError
from .telemetry_spans import upstream_span
from .wire import cookie_header
from .wire_request import with_query, without

if TYPE_CHECKING:
    from .wire_request import Request

logger = logging.getLogger(__name__)
REDIRECTS = {301, 302, 303, 307, 308}
MAX_REDIRECTS = 5
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


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def redirect(base: str, location: str) -> str:
    """The URL an answer's ``Location`` names, refused when urllib cannot read its origin
    (which decides whether the credentials follow): the upstream chose it."""
    try:
        url = urljoin(base, location)
        origin(url)
    except ValueError:
        raise ToolError("the API answered a redirect to something that is no URL") from None
    return url


class API(Protocol):
    """The wrapped API as ``follow`` and ``upstream_poll`` use it (``upstream.Upstream``)."""

    prefix: str

    @property
    def base_url(self) -> str: ...
    @property
    def max_response(self) -> int: ...
    def client(self) -> httpx2.AsyncClient: ...
    async def _send(self, request: Request) -> httpx2.Response: ...


async def follow(api: API, request: Request) -> httpx2.Response:
    """The request, and the redirects it answers with: same-origin ones keep the
    credentials, one to any other origin drops every credential (and never returns to
    a credentialed request) and is refused into the server's networks (a poll's first
    request, to its ``Location``, too). The last answer is read up to ``max_response``."""
    method, url = request.method, with_query(request.url, request.parts["query"])
    headers = dict(request.parts["headers"])
    cookies = dict(request.parts["cookies"])
    options = request.options
    home = origin(url)
    keys = {k: request.parts["query"][k] for k in request.secret_query}
    trusted = True
    for _ in range(MAX_REDIRECTS + 1):
        why = await refused(request.api or api.base_url, url)
        if why:  # a redirect or a poll's Location into the server's networks
            shown = f"{request.shown()}: not following the API's redirect to"
            raise ToolError(f"{shown} {request.redact(url)}: {why}")
        sent = dict(headers)
        if cookies:
            sent["Cookie"] = cookie_header(cookies)
        send, tracer = partial(_send, api.client(), method, url, options), telemetry.ACTIVE
        if tracer is None or not tracer.tracing:
            response = await send(sent)
        else:  # in its CLIENT span, ``traceparent`` injected inside it
            response = await upstream_span(tracer.tracer, send, method, request.redact(url), sent)
        location = response.headers.get("location")
        if response.status_code not in REDIRECTS or not location:
            limit = api.max_response
            too_large = (
                f"{request.shown(url)}: the answer is larger than {limit} bytes, the most "
                f"this server reads (setting {api.prefix}_MAX_RESPONSE_BYTES)"
            )
            return await capped.read(response, limit, ToolError(too_large))
        url = redirect(str(response.url), location)
        if (response.status_code == 303 and method != "HEAD") or (
            response.status_code in (301, 302) and method == "POST"
        ):
            method, options = "GET", {}
            headers.pop("Content-Type", None)
        if trusted and origin(url) != home:
            trusted = False
            headers = {k: v for k, v in headers.items() if k not in request.secret_headers}
            cookies, url = {}, request.leaving(url)
            logger.info("following a redirect to another origin without credentials")
        # the query key again on the API's origin, never off it (a Location may carry it)
        url = with_query(without(url, request.secret_query), keys if trusted else {})
        await response.aclose()
    raise ToolError(f"{request.shown()} failed: more than {MAX_REDIRECTS} redirects")


async def _send(
    client: httpx2.AsyncClient, method: str, url: str, options: Any, headers: dict[str, str]
) -> httpx2.Response:
    """One attempt; its answer is streamed (``capped.read`` reads it up to the limit)."""
    outgoing = client.build_request(method, url, headers=headers, **options)
    return await client.send(outgoing, stream=True)
