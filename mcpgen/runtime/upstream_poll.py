"""Asynchronous upstream operations (docs/tasks.md): an operation that answers
``202 Accepted`` with a ``Location`` is polled there until it ends.

While the answer is 202, or 200 with a JSON ``status`` of queued, pending, running or
in_progress (any case), the next poll waits ``Retry-After`` seconds (capped) or the
operation's ``interval``; a 303 leads to the result (followed like any redirect, so a
Location on another origin gets no credentials, and one into the server's own networks is
refused: ``redirects``); once a poll has left the API's origin,
no later poll carries them (that origin's Location may point back at the API); any other
answer is the result (an error status ends the call with its status and the start of its
body). Each poll's status reaches ``ctx.progress``: the task's ``statusMessage`` when the call is a task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from . import redirects
from .answers import parsed  # a lone surrogate in a status: no client reads it
from .errors import ToolError

if TYPE_CHECKING:
    import httpx2

    from .context import Context
    from .wire_request import Request

RUNNING = frozenset({"queued", "pending", "running", "in_progress", "accepted", "processing"})
MAX_WAIT = 60.0  # seconds one Retry-After may make a poll wait at most
MIN_WAIT = 1.0  # seconds a Retry-After shorter than the interval still waits (0: no pause)


def still_running(response: httpx2.Response) -> bool:
    if response.status_code == 202:
        return True
    if response.status_code != 200:
        return False
    try:
        data = parsed(response)
    except (ValueError, RecursionError):
        return False
    status = data.get("status") if isinstance(data, dict) else None
    return isinstance(status, str) and status.lower() in RUNNING


def wait_for(response: httpx2.Response, interval: float) -> float:
    """Seconds before the next poll: the answer's ``Retry-After`` (seconds), else ``interval``.
    A ``Retry-After: 0`` still waits ``MIN_WAIT`` (or the interval, if shorter): else an
    API answering it to every poll was asked without a pause for as long as the timeout
    (600 s), each poll a progress notification to the client."""
    given = response.headers.get("retry-after", "").strip()
    if given.isascii() and given.isdigit():  # "²" is a digit to Python
        return max(min(float(given), MAX_WAIT), min(interval, MIN_WAIT))
    return interval


def _status(response: httpx2.Response) -> str:
    if response.status_code == 200:
        try:
            return str(parsed(response).get("status"))
        except (ValueError, AttributeError, RecursionError):
            pass
    return f"HTTP {response.status_code}"


async def poll(
    upstream: redirects.API,
    request: Request,
    response: httpx2.Response,
    settings: dict[str, Any],
    ctx: Context | None,
) -> httpx2.Response:
    """The final answer of an operation that answered ``response`` (202 + Location)."""
    from .wire_request import Request

    interval = float(settings.get("interval", 2.0))
    timeout = float(settings.get("timeout", 600.0))
    location = response.headers.get("location")
    if not location:
        return response
    url = redirects.redirect(str(response.url), location)
    home = redirects.origin(request.url)
    trusted = redirects.origin(str(response.url)) == home  # once left, never credentialed again
    polls = 0
    with anyio.move_on_after(timeout) as scope:
        while still_running(response):
            location = response.headers.get("location")
            if location and response.status_code == 202:
                url = redirects.redirect(str(response.url), location)
            await anyio.sleep(wait_for(response, interval))
            await response.aclose()
            trusted = trusted and redirects.origin(url) == home  # credentials stay home
            follow = Request("GET", url if trusted else request.leaving(url))
            follow.base, follow.api = request.base, request.api
            if trusted:
                follow.parts["headers"] = dict(request.parts["headers"])
                follow.parts["cookies"] = dict(request.parts["cookies"])
                follow.parts["query"] = {k: request.parts["query"][k] for k in request.secret_query}
                follow.secret_headers = set(request.secret_headers)
                follow.secret_query = set(request.secret_query)
                follow.secrets = set(request.secrets)  # a redirect off the API drops echoes
            else:
                headers = request.parts["headers"]
                follow.parts["headers"] = {
                    k: v for k, v in headers.items() if k not in request.secret_headers
                }
            follow.parts["headers"].pop("Content-Type", None)
            response = await upstream._send(follow)
            trusted = trusted and redirects.origin(str(response.url)) == home  # a redirect left
            polls += 1
            if ctx is not None:
                shown = request.scrub(_status(response))[:200]  # the caller reads it
                await ctx.progress(polls, None, f"upstream: {shown}")
    if scope.cancelled_caught:
        raise ToolError(f"{request.shown()} was still running after {timeout:g} s")
    return response
