"""Multi-call tasks a scripted client completes against a generated server, in each mode.

A task is what a model would be asked ("comment on the oldest open issue of octo/hello");
the script does what a model would: it lists the tools, finds the operations it needs with
the server's own search (``search_docs`` in code mode, ``search_operations`` in search
mode, the tool list itself in tools mode), and calls them. It fails when search does not
offer an operation it needs among the first five results.

``Meter`` wraps an ``mcp.client.Client`` and counts the bytes of what the client sends and
receives for tools/list and tools/call: the compact JSON of each request's params and of
each result, i.e. what a model's context holds (the handshake and the transport's framing
are left out; they are the same in every mode).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

Json = Any
OWNER, REPO = "octo", "hello"
TOP = 5


def size(value: Json) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def dump(model: Any) -> Json:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass
class Meter:
    """A client that counts the bytes of tools/list and tools/call, both ways."""

    client: Any
    sent: int = 0
    received: int = 0
    calls: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.sent + self.received

    async def list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            self.sent += size({"cursor": cursor} if cursor else {})
            page = await self.client.list_tools(cursor=cursor)
            self.received += size(dump(page))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, name: str, arguments: dict[str, Json]) -> types.CallToolResult:
        self.sent += size({"name": name, "arguments": arguments})
        result: types.CallToolResult = await self.client.call_tool(name, arguments)
        self.received += size(dump(result))
        self.calls.append(name)
        return result


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def data(result: types.CallToolResult) -> Json:
    """A result's structured content, unwrapped (``{"result": [...]}`` holds a list)."""
    if result.is_error:
        raise AssertionError(f"the call failed: {text(result)[:2000]}")
    value = result.structured_content
    if value is None:
        value = json.loads(text(result))
    if isinstance(value, dict) and set(value) == {"result"}:
        return value["result"]
    return value


_SIGNATURE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(", re.M)


# -- finding operations, per mode ----------------------------------------------------------


async def find_code(meter: Meter, query: str, wanted: str) -> str:
    answer = text(await meter.call("search_docs", {"query": query}))
    offered = _SIGNATURE.findall(answer)[:TOP]
    assert wanted in offered, f"search_docs({query!r}) offered {offered}, not {wanted}"
    return answer


async def find_search(meter: Meter, query: str, wanted: str) -> Json:
    found = data(await meter.call("search_operations", {"query": query, "limit": TOP}))
    offered = [op["name"] for op in found["operations"]]
    assert wanted in offered, f"search_operations({query!r}) offered {offered}, not {wanted}"
    return data(await meter.call("describe_operation", {"name": wanted}))


# -- the tasks ---------------------------------------------------------------------------

COMMENT = "Is this still happening on the latest release?"

CODE_COMMENT = f"""
issues = issues_list_for_repo(owner={OWNER!r}, repo={REPO!r}, state="open",
                              sort="created", direction="asc")
oldest = min(issues, key=lambda issue: issue["created_at"])
comment = issues_create_comment(owner={OWNER!r}, repo={REPO!r},
                                issue_number=oldest["number"], body={COMMENT!r})
print("commented on", oldest["number"])
{{"issue": oldest["number"], "comment": comment["id"]}}
"""

CODE_DOCS_PRS = f"""
touching = []
for pr in pulls_list(owner={OWNER!r}, repo={REPO!r}, state="open"):
    files = pulls_list_files(owner={OWNER!r}, repo={REPO!r}, pull_number=pr["number"])
    if any(f["filename"].startswith("docs/") for f in files):
        touching.append(pr["number"])
touching
"""


async def comment_oldest(meter: Meter, mode: str) -> Json:
    """List the repository's open issues and comment on the oldest one: ``{issue, comment}``."""
    listed = [t.name for t in await meter.list_tools()]
    if mode == "code":
        await find_code(meter, "list the open issues of a repository", "issues_list_for_repo")
        await find_code(meter, "comment on an issue", "issues_create_comment")
        return data(await meter.call("execute", {"code": CODE_COMMENT}))["result"]
    call = _caller(meter, mode, listed)
    if mode == "search":
        await find_search(meter, "list the open issues of a repository", "issues_list_for_repo")
        await find_search(meter, "comment on an issue", "issues_create_comment")
    arguments = {"owner": OWNER, "repo": REPO, "state": "open", "sort": "created"}
    issues = data(await call("issues_list_for_repo", {**arguments, "direction": "asc"}))
    oldest = min(issues, key=lambda issue: issue["created_at"])
    comment = data(
        await call(
            "issues_create_comment",
            {"owner": OWNER, "repo": REPO, "issue_number": oldest["number"], "body": COMMENT},
        )
    )
    return {"issue": oldest["number"], "comment": comment["id"]}


async def prs_touching_docs(meter: Meter, mode: str) -> Json:
    """The open pull requests that change a file under ``docs/``: their numbers."""
    listed = [t.name for t in await meter.list_tools()]
    if mode == "code":
        await find_code(meter, "list pull requests", "pulls_list")
        await find_code(meter, "files changed by a pull request", "pulls_list_files")
        return data(await meter.call("execute", {"code": CODE_DOCS_PRS}))["result"]
    call = _caller(meter, mode, listed)
    if mode == "search":
        await find_search(meter, "list pull requests", "pulls_list")
        await find_search(meter, "files changed by a pull request", "pulls_list_files")
    touching = []
    for pr in data(await call("pulls_list", {"owner": OWNER, "repo": REPO, "state": "open"})):
        arguments = {"owner": OWNER, "repo": REPO, "pull_number": pr["number"]}
        files = data(await call("pulls_list_files", arguments))
        if any(f["filename"].startswith("docs/") for f in files):
            touching.append(pr["number"])
    return touching


def _caller(
    meter: Meter, mode: str, listed: list[str]
) -> Callable[[str, dict[str, Json]], Awaitable[types.CallToolResult]]:
    if mode == "tools":

        async def direct(name: str, arguments: dict[str, Json]) -> types.CallToolResult:
            assert name in listed, f"tools/list has no {name}"
            return await meter.call(name, arguments)

        return direct

    async def through(name: str, arguments: dict[str, Json]) -> types.CallToolResult:
        return await meter.call("call_operation", {"name": name, "arguments": arguments})

    return through


TASKS: dict[str, Callable[[Meter, str], Awaitable[Json]]] = {
    "comment on the oldest open issue": comment_oldest,
    "open PRs touching docs/": prs_touching_docs,
}
EXPECTED = {"comment on the oldest open issue": 3, "open PRs touching docs/": [12]}


def check(task: str, answer: Json) -> None:
    """The task's answer is right (the stand-in's data decides what right is)."""
    if task == "comment on the oldest open issue":
        assert answer["issue"] == EXPECTED[task], answer
        assert isinstance(answer["comment"], int), answer
    else:
        assert answer == EXPECTED[task], answer
