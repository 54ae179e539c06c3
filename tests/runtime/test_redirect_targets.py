"""A redirect, or a 202's ``Location``, from the wrapped API into the server's own networks
(loopback, link-local such as cloud metadata, private) is not followed unless the API's
host is of that kind: the server fetched ``http://127.0.0.1:18802/landing`` for the
``shop`` example's upstream and returned its body as the tool's result.

The policy resolves names with ``anyio.getaddrinfo``, which ``names`` fakes for the names
it is given (the HTTP client still resolves them for real): the recorders all listen on
127.0.0.1, and ``localhost`` is the API, made public or private by what it resolves to."""

from __future__ import annotations

import re
import socket
from typing import Any

import anyio
import httpx2
import pytest
from wirekit import operations, recorder, upstream

from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.redirects import refused

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
PUBLIC = "93.184.215.14"
SCHEMES = {"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Host names (or literals) the policy resolves to the address given; a refused target
    that was followed fails fast (no retries, a 2 s timeout) rather than at the test's."""
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_TIMEOUT", "2")
    monkeypatch.setenv("MCPGEN_TEST_WIRE_API_RETRIES", "0")
    given: dict[str, str] = {}
    real = anyio.getaddrinfo

    async def resolve(host: str, port: Any, **options: Any) -> Any:
        if host not in given:
            return await real(host, port, **options)
        family = socket.AF_INET6 if ":" in given[host] else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (given[host], 0))]

    monkeypatch.setattr(anyio, "getaddrinfo", resolve)
    return given


def file_operation() -> Any:
    """``GET /file`` with the API key in a header."""
    op = {"operationId": "send", "security": [{"key": []}], "responses": {"200": {}}}
    data = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/file": {"get": op}},
        "components": {"securitySchemes": SCHEMES},
    }
    return operations(data)["send"]


def local(url: str) -> str:
    return url.replace("127.0.0.1", "localhost")


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{port}/landing",
        "http://[::1]:{port}/landing",
        "http://[::ffff:127.0.0.1]:{port}/landing",
        "http://0.0.0.0:{port}/landing",
        "http://2130706433:{port}/landing",  # 127.0.0.1 as one number: resolved, not parsed
        "http://169.254.169.254/latest/meta-data/",
        "http://loopback.test:{port}/landing",
    ],
)
async def test_a_public_api_redirecting_into_the_servers_networks_is_refused(
    names: dict[str, str], target: str
) -> None:
    names.update({"localhost": PUBLIC, "loopback.test": "127.0.0.1"})
    with recorder() as api, recorder() as internal:
        internal.answer(200, "application/json", b'{"internal": "s3cret-landing"}')
        url = target.format(port=internal.url.rsplit(":", 1)[1])
        api.moved = {"/file": url}
        with pytest.raises(ToolError) as caught:
            await upstream(local(api.url), SCHEMES).call(file_operation(), {})
    message = str(caught.value)
    assert "not following the API's redirect to " + url in message, message
    assert "s3cret" not in message and internal.seen == []


async def test_a_public_target_is_followed_without_credentials_and_checked_at_each_hop(
    names: dict[str, str],
) -> None:
    """A public origin is followed as before (without the key); its own redirect into the
    server's networks is not."""
    names.update({"localhost": PUBLIC, "127.0.0.1": PUBLIC, "inside.test": "10.1.2.3"})
    with recorder() as api, recorder() as cdn:
        api.moved = {"/file": cdn.url + "/f"}
        result = await upstream(local(api.url), SCHEMES).call(file_operation(), {})
        assert not result.is_error, result.content
        assert [seen.target for seen in cdn.seen] == ["/f"]
        assert api.seen[0].headers["x-api-key"] and "x-api-key" not in cdn.seen[0].headers
        cdn.moved = {"/f": "http://inside.test/admin"}
        with pytest.raises(ToolError, match=r"inside\.test is a private address"):
            await upstream(local(api.url), SCHEMES).call(file_operation(), {})


async def test_a_poll_location_into_the_servers_networks_is_refused(
    names: dict[str, str],
) -> None:
    from mcpgen.runtime.upstream import Request
    from mcpgen.runtime.upstream_poll import poll

    names["localhost"] = PUBLIC
    with recorder() as api, recorder() as internal:
        sent = Request("POST", local(api.url) + "/jobs")
        started = httpx2.Response(
            202,
            headers={"location": internal.url + "/status", "retry-after": "0"},
            request=httpx2.Request("POST", sent.url),
        )
        with pytest.raises(ToolError, match=r"127\.0\.0\.1 is a loopback address"):
            await poll(upstream(local(api.url)), sent, started, {"interval": 0}, None)
    assert internal.seen == []


@pytest.mark.parametrize(
    ("api", "target", "why"),
    [
        (PUBLIC, "8.8.8.8", None),
        ("10.0.0.5", "8.8.8.8", None),
        ("10.0.0.5", "10.9.9.9", None),  # a service on the API's network
        ("10.0.0.5", "fd00::1", None),
        ("127.0.0.1", "::1", None),  # a local API (tests, a sidecar)
        ("169.254.10.1", "169.254.169.254", None),
        (PUBLIC, "192.168.1.1", "private"),
        (PUBLIC, "100.64.0.1", "private"),  # shared address space (CGNAT)
        (PUBLIC, "fc00::1", "private"),
        (PUBLIC, "::", "loopback"),
        (PUBLIC, "fe80::1", "link-local"),
        (PUBLIC, "::ffff:169.254.169.254", "link-local"),
        # IPv6 addresses judged by the IPv4 address they embed: NAT64 (well-known prefix and
        # local-use, private at most), IPv4-compatible, IPv4-translated, Teredo's client
        (PUBLIC, "64:ff9b::7f00:1", "loopback"),
        ("10.0.0.5", "64:ff9b::a9fe:a9fe", "link-local"),
        (PUBLIC, "64:ff9b:1:2::a00:1", "private"),
        ("10.0.0.5", "64:ff9b:1::7f00:1", "loopback"),
        (PUBLIC, "64:ff9b:1::808:808", "private"),
        (PUBLIC, "::7f00:1", "loopback"),
        ("10.0.0.5", "::a9fe:a9fe", "link-local"),
        (PUBLIC, "::ffff:0:7f00:1", "loopback"),
        (PUBLIC, "2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),
        (PUBLIC, "2001:0:4136:e378:8000:63bf:f7f7:f7f7", None),  # client 8.8.8.8
        ("10.0.0.5", "169.254.169.254", "link-local"),  # metadata, from a private API too
        ("10.0.0.5", "fd00:ec2::254", "link-local"),  # AWS's over IPv6 (unique-local)
        ("10.0.0.5", "127.0.0.1", "loopback"),  # the server's own, not the API's network
        ("127.0.0.1", "10.0.0.5", "private"),
    ],
)
async def test_which_addresses_a_redirect_may_reach(
    names: dict[str, str], api: str, target: str, why: str | None
) -> None:
    names.update({"api.test": api, "there.test": target})
    said = await refused("https://api.test", "https://there.test/x")
    assert said == (why and f"there.test is a {why} address ({target}), and the API's host is not")
    assert await refused("https://api.test", "https://api.test/elsewhere") is None


async def test_a_target_that_does_not_resolve_is_left_to_the_connection(
    names: dict[str, str],
) -> None:
    """Connecting fails as well, or an egress proxy resolves the name and decides."""
    names["api.test"] = PUBLIC
    assert await refused("https://api.test", "https://nowhere.invalid/") is None


@pytest.mark.parametrize("target", ["http://[fe80::1%25lo]/", "http://[FE80::1%25lo]:8080/x"])
async def test_a_zone_id_is_read_as_the_client_reads_it(names: dict[str, str], target: str) -> None:
    """``%25lo`` is the zone ``lo`` the HTTP client connects through; resolved as written
    (``fe80::1%25lo``) it named nothing, and the link-local address was followed (on eth0
    this machine's own, a server listening on ``::`` answered)."""
    names["api.test"] = PUBLIC
    said = await refused("https://api.test", target)
    assert re.fullmatch(
        r"(?i)fe80::1%lo is a link-local address \(fe80::1%\w+\), and .*", said or ""
    )
