"""Code mode: search_docs answers, execute over a fake dispatch point, search mode's answer."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pydantic_monty  # noqa: F401 (a test dependency: never skipped)
import pytest

from mcpgen.runtime.code_docs import search_operations, signature
from mcpgen.runtime.codemode import CodeMode, Limits
from mcpgen.runtime.metatools import mode_tools
from mcpgen.runtime.search import OperationDoc, SearchIndex

pytestmark = pytest.mark.timeout(120)

USER = {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}
DOCS = [
    OperationDoc(
        "repos_get",
        title="Get a repository",
        method="GET",
        path="/repos/{owner}/{repo}",
        input_schema={
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "The account owner."},
                "repo": {"type": "string"},
            },
            "required": ["owner", "repo"],
        },
        output_schema={
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "full_name": {"type": "string"},
                "owner": {"$ref": "#/$defs/User"},
                "html_url": {"type": "string"},
            },
            "required": ["id", "full_name"],
            "$defs": {"User": USER},
        },
    ),
    OperationDoc(
        "issues_list_for_repo",
        title="List repository issues",
        method="GET",
        path="/repos/{owner}/{repo}/issues",
        wrapped=True,
        input_schema={
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "state": {"enum": ["open", "closed", "all"], "type": "string"},
            },
            "required": ["owner", "repo"],
        },
        output_schema={
            "type": "object",
            "properties": {
                "result": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"number": {"type": "integer"}, "title": {"type": "string"}},
                    },
                }
            },
            "required": ["result"],
        },
    ),
    OperationDoc(
        "issues_create_comment",
        title="Create an issue comment",
        method="POST",
        path="/repos/{owner}/{repo}/issues/{issue_number}/comments",
        input_schema={
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "issue_number": {"type": "integer"},
                "body": {"type": "string"},
                "note": {"type": ["string", "null"]},
            },
            "required": ["owner", "repo", "issue_number", "body"],
        },
    ),
    OperationDoc(
        "repos_delete",
        title="Delete a repository",
        method="DELETE",
        path="/repos/{owner}/{repo}",
        input_schema={
            "type": "object",
            "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}},
            "required": ["owner", "repo"],
        },
    ),
]


def structured(data: Any) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data))],
        structured_content=data if isinstance(data, dict) else None,
    )


def failed(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


class FakeAPI:
    """The dispatch point's stand-in: records every call and answers canned results."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], Any]] = []

    async def __call__(
        self, name: str, arguments: dict[str, Any], ctx: Any
    ) -> types.CallToolResult:
        self.calls.append((name, arguments, ctx))
        if name == "repos_get":
            if arguments["repo"] == "missing":
                return failed("GET /repos/o/missing failed: HTTP 404: Not Found")
            owner = arguments["owner"]
            return structured(
                {"id": 42, "full_name": f"{owner}/{arguments['repo']}", "owner": {"login": owner}}
            )
        if name == "issues_list_for_repo":
            issues = [{"number": 1, "title": "first"}, {"number": 2, "title": "second"}]
            if arguments.get("state") == "closed":
                issues = [{"number": 9, "title": "old"}]
            return structured({"result": issues})
        if name == "issues_create_comment":
            return structured({"id": 7, "body": arguments["body"], "args": sorted(arguments)})
        if name == "repos_delete":
            return types.CallToolResult(content=[])
        raise AssertionError(f"unexpected {name}")


def run(body: Callable[[CodeMode, FakeAPI], Awaitable[Any]], limits: Limits | None = None) -> Any:
    async def main() -> Any:
        api = FakeAPI()
        mode = CodeMode(SearchIndex(DOCS), api, limits or Limits(timeout=20, cpu_seconds=3))
        try:
            return await body(mode, api)
        finally:
            await mode.aclose()

    return anyio.run(main)


def text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


# -- search_docs ----------------------------------------------------------------------


def test_signatures_show_parameters_and_result_shapes() -> None:
    repos_get, issues, comment, _ = DOCS
    assert signature(repos_get) == (
        "repos_get(owner: str, repo: str) -> "
        "{id: int, full_name: str, owner?: dict, html_url?: str}"
    )
    assert signature(issues) == (
        "issues_list_for_repo(owner: str, repo: str, "
        "state: Literal['open', 'closed', 'all'] = None) -> list[{number?: int, title?: str}]"
    )
    assert "note: str | None = None" in signature(comment)


def test_long_parameter_lists_are_cut_in_a_search_answer_not_in_detail() -> None:
    properties = {f"p{i}": {"type": "integer"} for i in range(12)}
    doc = OperationDoc(
        "many",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}, **properties}},
    )
    short = signature(doc)
    assert short.startswith("many(id: str = None, p0: int = None,")
    assert "p6: int = None, ...  # +5 optional: search_docs('many')" in short
    assert "p11" not in short
    assert "p11: int = None" in text(
        anyio.run(CodeMode(SearchIndex([doc]), FakeAPI()).search_docs, "many")
    )


def test_search_docs_answers_signatures_and_a_line_of_docs() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        answer = text(await mode.search_docs("comment on an issue", 2))
        lines = answer.splitlines()
        assert lines[1].startswith("issues_create_comment(owner: str, repo: str, issue_number: int")
        assert lines[2] == "    # Create an issue comment"
        assert len(lines) == 5  # a header and two operations
        assert len(answer.encode()) < 1000
        assert api.calls == []

    run(body)


def test_search_docs_with_an_exact_name_shows_every_parameter() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        answer = text(await mode.search_docs("repos_get"))
        assert answer.splitlines()[0].startswith("repos_get(owner: str, repo: str) -> ")
        assert "owner?: {login: str}" in answer  # the detailed view goes one level deeper
        assert "#   owner (required): The account owner." in answer
        assert "# GET /repos/{owner}/{repo}" in answer

    run(body)


def test_search_docs_shows_only_what_the_caller_may_use() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        def allowed(name: str) -> bool:
            return name != "repos_delete"

        assert "repos_delete" in text(await mode.search_docs("delete a repository"))
        hidden = text(await mode.search_docs("delete a repository", allowed=allowed))
        assert "repos_delete" not in hidden
        detail = text(await mode.search_docs("repos_delete", allowed=allowed))
        assert not detail.startswith("repos_delete(")
        assert "No operation matches" in text(await mode.search_docs("zzzz qqqq"))

    run(body)


def test_a_huge_query_gets_an_answer_of_bounded_size() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        for query in ("zzzz " * 200_000, "comment on an issue " * 50_000):
            assert len(text(await mode.search_docs(query)).encode()) < 6000

    run(body)


def test_search_mode_does_not_repeat_a_huge_unknown_name() -> None:
    from mcpgen.runtime.errors import ToolError
    from mcpgen.runtime.metatools import Operations
    from mcpgen.runtime.tools import ToolTable

    entry = {"definition": {"name": "op", "inputSchema": {"type": "object"}}, "http": {}}
    operations = Operations({"tools": [entry]}, ToolTable([]))
    for tool in (operations.describe, operations.call):
        with pytest.raises(ToolError) as refused:
            anyio.run(tool, {"name": "x" * 100_000}, None)
        assert len(str(refused.value)) < 200


def test_search_mode_answers_ranked_results_with_reasons() -> None:
    index = SearchIndex(DOCS)
    result = search_operations(index, "delete a repo", 2, allowed=lambda n: True)
    assert result.structured_content is not None
    found = result.structured_content["operations"]
    assert found[0]["name"] == "repos_delete"
    assert found[0]["matched"]["name"] == ["delete", "repo"]
    assert found[0]["summary"] == "Delete a repository"
    assert json.loads(text(result)) == result.structured_content
    limited = search_operations(index, "repository", 5, allowed=lambda n: n.startswith("issues"))
    assert limited.structured_content is not None
    assert {o["name"] for o in limited.structured_content["operations"]} <= {
        "issues_list_for_repo",
        "issues_create_comment",
    }


def test_the_two_tools_fit_in_two_kilobytes() -> None:
    tools = mode_tools("code")  # (what metatools.install adds to the table in code mode)
    assert [t["name"] for t in tools] == ["search_docs", "execute"]
    listed = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    assert len(listed.encode()) <= 2048
    # static data (modes.json, which the generator reads too): the limits are configurable
    # per server, so the description names them and an error says which one a run hit
    assert "limited" in tools[1]["description"]
    assert tools[1]["outputSchema"]["required"] == ["stdout", "result"]


# -- execute ----------------------------------------------------------------------------


def test_calls_chain_and_results_feed_the_next_call() -> None:
    code = """
repo = repos_get(owner="octo", repo="hello")
owner, name = repo["full_name"].split("/")
open_issues = issues_list_for_repo(owner=owner, repo=name)
for issue in open_issues:
    issues_create_comment(owner=owner, repo=name, issue_number=issue["number"], body="seen")
print("commented on", len(open_issues))
[i["number"] for i in open_issues]
"""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        result = await mode.execute(code, ctx="the-ctx")
        assert not result.is_error, text(result)
        assert result.structured_content == {"stdout": "commented on 2\n", "result": [1, 2]}
        assert json.loads(text(result)) == result.structured_content
        assert [(name, args) for name, args, _ in api.calls] == [
            ("repos_get", {"owner": "octo", "repo": "hello"}),
            ("issues_list_for_repo", {"owner": "octo", "repo": "hello"}),
            (
                "issues_create_comment",
                {"owner": "octo", "repo": "hello", "issue_number": 1, "body": "seen"},
            ),
            (
                "issues_create_comment",
                {"owner": "octo", "repo": "hello", "issue_number": 2, "body": "seen"},
            ),
        ]
        assert {ctx for _, _, ctx in api.calls} == {"the-ctx"}

    run(body)


def test_the_last_expression_is_the_result_and_statements_give_none() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        first = await mode.execute("x = 2\nx * 21")
        assert first.structured_content == {"stdout": "", "result": 42}
        second = await mode.execute("print('a', 1)\nprint('b')\ny = 3")
        assert second.structured_content == {"stdout": "a 1\nb\n", "result": None}
        third = await mode.execute("{'t': (1, 2), 's': {3}, 'b': b'hi', 'f': 1.5}")
        assert third.structured_content == {
            "stdout": "",
            "result": {"t": [1, 2], "s": [3], "b": "aGk=", "f": 1.5},
        }

    run(body)


def test_an_integer_too_long_for_text_is_named_not_called_too_big() -> None:
    """``10**5000`` (5,001 digits, 2 kB as JSON) as a result or an argument was refused as
    over the 64 kB output limit: Python writes no integer of more than 4,300 digits."""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        result = await mode.execute("10**5000")
        comment = "issues_create_comment(owner='o', repo='r', issue_number=10**5000, body='x')"
        argument = await mode.execute(comment)
        for answer in (result, argument):
            assert answer.is_error
            message = answer.content[0].text  # type: ignore[union-attr]
            assert "more than 4300 digits" in message and "hex(n)" in message, message
            assert "limit" not in message and "over" not in message
        assert api.calls == []
        fits = await mode.execute("len(hex(10**5000))")
        assert fits.structured_content == {"stdout": "", "result": 4155}

    run(body)


def test_operation_errors_are_exceptions_the_code_can_catch() -> None:
    code = """
try:
    repos_get(owner="o", repo="missing")
except RuntimeError as error:
    print("caught:", error)
repos_get(owner="o", repo="there")["id"]
"""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        result = await mode.execute(code)
        assert not result.is_error, text(result)
        assert result.structured_content == {
            "stdout": "caught: repos_get failed: GET /repos/o/missing failed: HTTP 404: Not Found\n",
            "result": 42,
        }
        uncaught = await mode.execute('repos_get(owner="o", repo="missing")')
        assert uncaught.is_error
        assert "RuntimeError: repos_get failed: GET /repos/o/missing failed: HTTP 404" in text(
            uncaught
        )
        assert 'File "<python-input-0>", line 1' in text(uncaught)

    run(body)


def test_unknown_and_forbidden_functions_are_refused() -> None:
    def allowed(name: str) -> bool:
        return name != "repos_delete"

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        unknown = await mode.execute('repos_destroy(owner="o", repo="r")', allowed=allowed)
        assert unknown.is_error
        assert "NameError: name 'repos_destroy' is not defined" in text(unknown)
        forbidden = await mode.execute('repos_delete(owner="o", repo="r")', allowed=allowed)
        assert forbidden.is_error
        assert "PermissionError: repos_delete: this caller may not use this operation" in text(
            forbidden
        )
        aliased = await mode.execute("f = repos_delete\nf(owner='o', repo='r')", allowed=allowed)
        assert aliased.is_error and "PermissionError" in text(aliased)
        caught = await mode.execute(
            "try:\n    repos_delete(owner='o', repo='r')\n    x = 'yes'\n"
            "except PermissionError:\n    x = 'no'\nx",
            allowed=allowed,
        )
        assert caught.structured_content == {"stdout": "", "result": "no"}
        assert api.calls == []
        allowed_all = await mode.execute('repos_delete(owner="o", repo="r")')
        assert allowed_all.structured_content == {"stdout": "", "result": None}
        assert [name for name, _, _ in api.calls] == ["repos_delete"]

    run(body)


def test_an_operation_named_like_python_s_own_is_that_name_with_an_underscore() -> None:
    """``list``, ``import``, ``print``: the sandbox never looks such a name up (a builtin, or
    not a name at all), so the operation is ``list_()`` there, as search_docs shows it."""
    limit = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    docs = [OperationDoc(n, title=f"{n} things", input_schema=limit) for n in DOCS_SHADOWED]

    async def main() -> None:
        calls: list[tuple[str, Any]] = []

        async def call(name: str, arguments: dict[str, Any], ctx: Any) -> types.CallToolResult:
            calls.append((name, arguments))
            return structured({"op": name})

        mode = CodeMode(SearchIndex(docs), call, Limits(timeout=20, cpu_seconds=3))
        try:
            for name in DOCS_SHADOWED:
                assert text(await mode.search_docs(name)).startswith(f"{name}_(limit: int")
                assert text(await mode.search_docs(f"{name}_")).startswith(f"{name}_(")
            code = "print('hi')\n[list_(limit=2)['op'], import_()['op'], print_()['op']]"
            done = await mode.execute(code)
            assert done.structured_content == {"stdout": "hi\n", "result": list(DOCS_SHADOWED)}
            assert calls == [("list", {"limit": 2}), ("import", {}), ("print", {})]
        finally:
            await mode.aclose()

    anyio.run(main)


DOCS_SHADOWED = ("list", "import", "print")


def test_arguments_are_keywords_and_none_means_left_out() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        positional = await mode.execute('repos_get("o", "r")')
        assert "TypeError: repos_get() takes keyword arguments only" in text(positional)
        missing = await mode.execute('repos_get(owner="o")')
        assert "TypeError: repos_get() missing required keyword argument 'repo'" in text(missing)
        unexpected = await mode.execute('repos_get(owner="o", repo="r", colour="red")')
        assert "unexpected keyword argument 'colour'" in text(unexpected)
        assert api.calls == []
        ok = await mode.execute(
            'issues_create_comment(owner="o", repo="r", issue_number=1, body="b", note=None)'
        )
        assert ok.structured_content is not None
        assert ok.structured_content["result"]["args"] == [
            "body",
            "issue_number",
            "note",  # accepts null: sent as null
            "owner",
            "repo",
        ]
        await mode.execute('issues_list_for_repo(owner="o", repo="r", state=None)')
        assert api.calls[-1][1] == {"owner": "o", "repo": "r"}  # does not: left out

    run(body)


def test_wrapped_results_reach_the_code_unwrapped() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        result = await mode.execute(
            'len(issues_list_for_repo(owner="o", repo="r", state="closed"))'
        )
        assert result.structured_content == {"stdout": "", "result": 1}

    run(body)


def test_a_failing_dispatch_point_becomes_an_exception_without_host_details() -> None:
    class ToolError(Exception):
        pass

    async def refusing(name: str, arguments: dict[str, Any], ctx: Any) -> types.CallToolResult:
        if arguments["repo"] == "bug":
            raise OSError("/srv/secret/path: disk on fire")
        raise ToolError("missing credentials for the upstream API: set TOKEN")

    async def main() -> tuple[str, str]:
        mode = CodeMode(SearchIndex(DOCS), refusing, Limits(timeout=20))
        try:
            told = text(await mode.execute('repos_get(owner="o", repo="r")'))
            hidden = text(await mode.execute('repos_get(owner="o", repo="bug")'))
            return told, hidden
        finally:
            await mode.aclose()

    told, hidden = anyio.run(main)
    assert "RuntimeError: repos_get: missing credentials for the upstream API: set TOKEN" in told
    assert "RuntimeError: repos_get failed (OSError)" in hidden
    assert "/srv/secret" not in hidden and "disk on fire" not in hidden


def test_syntax_errors_and_printed_output_come_back_with_the_error() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        syntax = await mode.execute("x = (")
        assert syntax.is_error and "SyntaxError" in text(syntax)
        partial = await mode.execute("print('before')\n1 / 0")
        assert partial.is_error
        assert text(partial).startswith("before\n\nTraceback (most recent call last):")
        assert "ZeroDivisionError: division by zero" in text(partial)

    run(body)


def test_sleep_is_served_within_its_budget() -> None:
    async def body(mode: CodeMode, api: FakeAPI) -> None:
        ok = await mode.execute("import time\ntime.sleep(0.05)\n'awake'")
        assert ok.structured_content == {"stdout": "", "result": "awake"}
        over = await mode.execute("import time\ntime.sleep(0.2)\ntime.sleep(0.2)")
        assert over.is_error and "TimeoutError: " in text(over) and "sleep" in text(over)
        awaited = await mode.execute("import asyncio\nawait asyncio.sleep(0.05)\n'awake'")
        assert awaited.structured_content == {"stdout": "", "result": "awake"}, text(awaited)

    run(body, Limits(timeout=20, sleep_seconds=0.3))


def test_an_operation_may_take_longer_than_the_sandbox_cpu_limit() -> None:
    async def slow(name: str, arguments: dict[str, Any], ctx: Any) -> types.CallToolResult:
        await anyio.sleep(2.5)
        return structured({"id": 1, "full_name": "o/r"})

    async def main() -> types.CallToolResult:
        mode = CodeMode(SearchIndex(DOCS), slow, Limits(timeout=20, cpu_seconds=0.5))
        try:
            return await mode.execute('repos_get(owner="o", repo="r")["id"]')
        finally:
            await mode.aclose()

    result = anyio.run(main)
    assert result.structured_content == {"stdout": "", "result": 1}, text(result)


def test_a_lone_surrogate_in_the_code_is_refused_not_sent_as_u_fffd() -> None:
    """Python reads ``"\\ud800"`` (and JavaScript's pair ``"\\ud83d\\ude00"``) as lone
    surrogates, which UTF-8 cannot encode; Monty reads each as U+FFFD and would send that
    upstream. A tools/call with one is a parse error (test_rt_stdio_wire, ..._hostile_http)."""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        pair = await mode.execute(
            'issues_create_comment(owner="o", repo="r", issue_number=1,\n'
            '    body="hi \\ud83d\\ude00")'
        )
        assert pair.is_error
        assert text(pair).startswith("SyntaxError: line 2: a string holds a lone UTF-16")
        lone = await mode.execute('x = f"{1}\\udc00"')
        assert lone.is_error and "line 1: a string holds a lone UTF-16 surrogate" in text(lone)
        raw = await mode.execute('x = "\ud800"')  # the character itself: Monty's SyntaxError
        assert raw.is_error and "lone surrogates" in text(raw)
        assert api.calls == []
        fine = await mode.execute(
            'issues_create_comment(owner="o", repo="r", issue_number=1, body="\\U0001f600")\n'
            '[r"\\ud800", b"\\ud800", "\\ufffd"]'
        )
        assert fine.structured_content == {
            "stdout": "",
            "result": ["\\ud800", "XHVkODAw", "\ufffd"],
        }, text(fine)
        assert api.calls[0][1]["body"] == "\U0001f600"

    run(body)


def test_a_lone_surrogate_in_code_newer_than_the_host_python_is_refused_too() -> None:
    """Monty reads syntax the host's Python may not (3.12's f-string quotes on 3.11): the
    check read such code as none of its business, and Monty sent U+FFFD upstream."""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        code = (
            'd = {"k": 1}\nissues_create_comment(owner="o", repo="r", issue_number=1,\n'
            '    body=f"{d["k"]}\\ud800")'
        )
        lone = text(await mode.execute(code))
        assert lone.startswith("SyntaxError: line 3: a string holds a lone UTF-16"), lone
        fine = await mode.execute(code.replace("\\ud800", "\\\\ud800"))  # a backslash, a "u"
        assert not fine.is_error, text(fine)
        assert [call[1]["body"] for call in api.calls] == ["1\\ud800"]

    run(body)


def test_an_argument_that_is_not_text_is_an_error_naming_it() -> None:
    """The host's own check, whatever the sandbox hands over: a lone surrogate in a value
    or a key never reaches the dispatch point (nor is it called too big)."""
    from mcpgen.runtime.codemode import _Run

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        comment = {"owner": "o", "repo": "r", "issue_number": 1}
        for body_value in ("a\ud800", {"k\udc00": 1}, ["ok", {"x": "\udfff"}]):
            answer = await mode._operation(
                "issues_create_comment", (), {**comment, "body": body_value}, _Run(None, None)
            )
            assert answer == {
                "exc_type": "ValueError",
                "message": "issues_create_comment(): argument 'body' is not text: it holds a "
                "lone UTF-16 surrogate (\\ud800-\\udfff), which UTF-8 cannot encode",
            }
        assert api.calls == []

    run(body)


def test_an_argument_nested_deeper_than_the_sandbox_hands_over_is_refused() -> None:
    """Monty hands a value nested 200 levels deep over as the text '<deeply nested>': the
    call is refused rather than sent with other data than the code wrote."""

    async def body(mode: CodeMode, api: FakeAPI) -> None:
        code = "d = 1\nfor _ in range({}):\n    d = [d]\n"
        code += "issues_create_comment(owner='o', repo='r', issue_number=1, body=d)"
        deep = text(await mode.execute(code.format(300)))
        assert "ValueError: issues_create_comment(): argument 'body' is nested" in deep, deep
        assert api.calls == []
        assert not (await mode.execute(code.format(60))).is_error

    run(body)
