"""Code mode end to end: generated servers (GitHub's spec and a small one) built with
``python -m mcpgen build``, run over HTTP and stdio against a local stand-in of GitHub's
API (``GITHUB_API_BASE_URL``), and a scripted client that finishes multi-call tasks
through ``search_docs`` and ``execute`` in both protocol eras. Also: per-operation scopes
(a token without a scope neither sees the operation in ``search_docs`` nor can call it from
``execute``) and the per-run limits of ``openapi.codeMode``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import codemode_tasks as tasks
import pydantic_monty  # noqa: F401 (a test dependency: never skipped)
import pytest
from e2e_support import ERAS, GITHUB_SPEC, Built, build, connect, http_server
from github_standin import SMALL_SPEC, StandIn, standin

pytestmark = pytest.mark.timeout(600)

SMALL = """
mcpgen: 1
server: {name: github, package: octo_mcp, version: 0.1.0}
openapi:
  source: octo.json
  mode: code
  codeMode: {calls: 5, timeout: 20, output: 4096}
"""

SCOPED = """
mcpgen: 1
server: {name: github, package: scoped_mcp, version: 0.1.0}
auth:
  type: oauth
  issuer: https://auth.example.com
  audience: https://mcp.example.com/mcp
  jwksFile: jwks.json
openapi:
  source: octo.json
  mode: code
  overrides:
    issues/list-for-repo: {scopes: [issues:read]}
    issues/list-comments: {scopes: [issues:read]}
    issues/create-comment: {scopes: [issues:write]}
    issues/update: {scopes: [issues:write]}
    pulls/list: {scopes: [pulls:read]}
    pulls/list-files: {scopes: [pulls:read]}
"""


def write_small(folder: Path, manifest: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "octo.json").write_text(json.dumps(SMALL_SPEC), "utf-8")
    (folder / "mcpgen.yaml").write_text(manifest, "utf-8")
    return folder / "mcpgen.yaml"


@pytest.fixture(scope="module")
def api() -> Iterator[StandIn]:
    with standin() as running:
        yield running


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("small")
    return build(write_small(folder, SMALL), folder / "out", "octo_mcp")


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Built:
    if not GITHUB_SPEC.exists():
        pytest.skip(f"GitHub's spec is not at {GITHUB_SPEC} (bench/github_spec.sh fetches it)")
    return build(GITHUB_SPEC, tmp_path_factory.mktemp("github") / "out", "github_mcp")


def run(body: Any) -> Any:
    return anyio.run(body)


def finish(api: StandIn, target: str | Built, era: str, env: dict[str, str]) -> dict[str, int]:
    """Every task through the server at ``target``; the bytes each took."""
    used = {}

    async def go() -> None:
        for name, task in tasks.TASKS.items():
            api.reset()
            async with connect(target, era, env) as client:
                meter = tasks.Meter(client)
                answer = await task(meter, "code")
                tasks.check(name, answer)
                assert meter.calls[-1] == "execute" and meter.calls.count("execute") == 1
                used[name] = meter.total
            if name.startswith("comment"):  # the comment reached the API, on issue 3
                posted = api.seen("POST", r"/repos/octo/hello/issues/3/comments")
                assert [r.body for r in posted] == [{"body": tasks.COMMENT}]

    run(go)
    return used


# -- the builds -----------------------------------------------------------------------------


def test_github_builds_in_code_mode_by_itself(github: Built) -> None:
    from mcpgen.runtime.search import SearchIndex, docs_from_spec

    spec = github.spec
    assert spec["mode"] == "code" and "mode auto chose code" in github.output
    assert "tools/list: 2 tools" in github.output
    assert len([e for e in spec["tools"] if e.get("http")]) > 1000
    index = json.loads((github.src / "github_mcp" / "_search.json").read_text("utf-8"))
    assert SearchIndex(docs_from_spec(spec), data=index).loaded  # made for these operations


# -- HTTP and stdio, both eras ----------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_small_spec_tasks_over_http(small: Built, api: StandIn, era: str, tmp_path: Path) -> None:
    env = {"GITHUB_API_BASE_URL": api.url}
    with http_server(small, env, tmp_path / "server.log") as url:
        used = finish(api, url, era, {})
    assert all(0 < n < 20_000 for n in used.values()), used


@pytest.mark.parametrize("era", ERAS)
def test_small_spec_tasks_over_stdio(small: Built, api: StandIn, era: str) -> None:
    finish(api, small, era, {"GITHUB_API_BASE_URL": api.url})


@pytest.mark.parametrize("era", ERAS)
def test_github_tasks_over_http(github: Built, api: StandIn, era: str, tmp_path: Path) -> None:
    env = {"GITHUB_API_BASE_URL": api.url}
    with http_server(github, env, tmp_path / "server.log") as url:
        used = finish(api, url, era, {})

        async def listed() -> int:
            async with connect(url, era) as client:
                page = await client.list_tools()
                assert [t.name for t in page.tools] == ["search_docs", "execute"]
                return tasks.size(tasks.dump(page))

        assert run(listed) <= 2048  # the whole tools/list of GitHub's API
    assert all(n < 40_000 for n in used.values()), used


@pytest.mark.parametrize("era", ERAS)
def test_github_tasks_over_stdio(github: Built, api: StandIn, era: str) -> None:
    finish(api, github, era, {"GITHUB_API_BASE_URL": api.url})


# -- limits from the manifest ------------------------------------------------------------------


def test_the_manifest_sets_the_per_run_limits(small: Built, api: StandIn) -> None:
    assert small.spec["codeMode"] == {"calls": 5, "timeout": 20, "output": 4096}
    code_calls = "\n".join(
        'pulls_list_files(owner="octo", repo="hello", pull_number=11)' for _ in range(6)
    )
    code_output = 'print("x" * 5000)'

    async def go() -> tuple[Any, Any, Any]:
        async with connect(small, "legacy", {"GITHUB_API_BASE_URL": api.url}) as client:
            calls = await client.call_tool("execute", {"code": code_calls})
            output = await client.call_tool("execute", {"code": code_output})
            fine = await client.call_tool("execute", {"code": code_calls.split("\n")[0]})
            return calls, output, fine

    api.reset()
    calls, output, fine = run(go)
    assert calls.is_error and "more than 5 operation calls" in tasks.text(calls)
    assert len(api.seen("GET", r"/repos/octo/hello/pulls/11/files")) == 5 + 1
    assert output.is_error and "4096" in tasks.text(output)
    assert not fine.is_error


# -- scopes ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory, api: StandIn) -> Iterator[tuple[str, Any]]:
    from mcpgen.runtime.testing_oauth import TokenIssuer

    folder = tmp_path_factory.mktemp("scoped")
    built = build(write_small(folder, SCOPED), folder / "out", "scoped_mcp")
    entries = {e["definition"]["name"]: e.get("scopes") for e in built.spec["tools"]}
    assert entries["issues_create_comment"] == ["issues:write"]
    issuer = TokenIssuer("https://auth.example.com", "https://mcp.example.com/mcp")
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps(issuer.jwks()), "utf-8")
    env = {"GITHUB_API_BASE_URL": api.url, "GITHUB_JWKS_FILE": str(jwks)}
    with http_server(built, env, folder / "server.log") as url:
        yield url, issuer


@pytest.mark.parametrize("era", ERAS)
def test_a_token_without_a_scope_neither_sees_nor_calls_the_operation(
    scoped: tuple[str, Any], api: StandIn, era: str
) -> None:
    url, issuer = scoped
    reader = {"Authorization": "Bearer " + issuer.token(["issues:read", "pulls:read"])}
    writer = {
        "Authorization": "Bearer " + issuer.token(["issues:read", "issues:write", "pulls:read"])
    }

    async def as_caller(headers: dict[str, str]) -> tuple[str, str, Any]:
        async with connect(url, era, headers=headers) as client:
            meter = tasks.Meter(client)
            found = tasks.text(await meter.call("search_docs", {"query": "comment on an issue"}))
            exact = tasks.text(await meter.call("search_docs", {"query": "issues_create_comment"}))
            ran = await meter.call("execute", {"code": tasks.CODE_COMMENT})
            return found, exact, ran

    api.reset()
    found, exact, ran = run(lambda: as_caller(reader))
    assert "issues_create_comment(" not in found and "issues_list_comments(" in found
    assert "issues_create_comment(" not in exact
    assert ran.is_error and "PermissionError" in tasks.text(ran)
    assert "issues_create_comment" in tasks.text(ran)
    assert api.seen("POST", r".*/comments") == []  # nothing reached the API
    assert len(api.seen("GET", r"/repos/octo/hello/issues")) == 1  # the read it may do

    api.reset()
    found, exact, ran = run(lambda: as_caller(writer))
    assert "issues_create_comment(" in found and exact.startswith("issues_create_comment(")
    assert not ran.is_error, tasks.text(ran)
    assert ran.structured_content["result"]["issue"] == 3
    assert len(api.seen("POST", r"/repos/octo/hello/issues/3/comments")) == 1


def test_a_token_without_any_scope_of_an_operation_is_refused_before_the_api(
    scoped: tuple[str, Any], api: StandIn
) -> None:
    url, issuer = scoped
    headers = {"Authorization": "Bearer " + issuer.token(["issues:read"])}

    async def go() -> Any:
        async with connect(url, "legacy", headers=headers) as client:
            return await client.call_tool("execute", {"code": tasks.CODE_DOCS_PRS})

    api.reset()
    ran = run(go)
    assert ran.is_error and "PermissionError" in tasks.text(ran)
    assert "pulls_list" in tasks.text(ran)
    assert api.requests == []


def test_code_mode_limits_out_of_range_are_refused_at_build_time(tmp_path: Path) -> None:
    from mcpgen.pipeline import load_manifest

    for given, field in (("{calls: 0}", "calls"), ("{sandbox: 1}", "sandbox")):
        path = write_small(
            tmp_path / field, SMALL.replace("{calls: 5, timeout: 20, output: 4096}", given)
        )
        loaded = load_manifest(path)
        assert loaded.manifest is None
        assert any("codeMode" in f"{p.field} {p.message}" for p in loaded.problems.errors)
    loaded = load_manifest(write_small(tmp_path / "fine", SMALL))
    assert loaded.manifest is not None and loaded.manifest.code_mode == {
        "calls": 5,
        "timeout": 20,
        "output": 4096,
    }
