"""More attacks at the seams (round m4): what an API's odd answers do to the wrapper."""

from __future__ import annotations

import pytest
from sec_harness import Mcp, Reply, Server, Upstream, tool_text

pytestmark = [pytest.mark.security, pytest.mark.timeout(60)]


@pytest.mark.parametrize(
    "location", ["http://127.0.0.1:+{port}/x", "http://127.0.0.1:99999/x", "http://[::1/x"]
)
def test_a_redirect_to_no_url_is_a_tool_error(target: Server, api: Upstream, location: str) -> None:
    """The API answers 302 with a Location urllib cannot read (a signed or out-of-range
    port, a broken IPv6 host): a tool error saying so, not an internal error with a
    traceback per call in the log; nothing is sent anywhere."""
    before = target.stderr().count("Traceback")
    api.routes["/api/v1/moved"] = Reply.redirect(location.format(port=api.port))
    answer = Mcp(target.url).call("get_moved")
    assert answer["result"]["isError"], answer
    assert "redirect" in tool_text(answer) and "internal error" not in tool_text(answer), answer
    assert [r.path for r in api.received] == ["/api/v1/moved"]
    assert target.stderr().count("Traceback") == before
