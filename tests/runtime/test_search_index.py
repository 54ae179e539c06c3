"""The runtime's operation search: analysis, BM25F ranking, reasons, filters, build-time data."""

from __future__ import annotations

import json
import time

import pytest

from mcpgen.runtime.search import (
    Analyzer,
    OperationDoc,
    SearchIndex,
    doc_from_tool,
    docs_from_spec,
)

pytestmark = pytest.mark.timeout(60)


def op(name: str, summary: str = "", **more: object) -> OperationDoc:
    return OperationDoc(name=name, title=summary, summary=summary, **more)  # type: ignore[arg-type]


DOCS = [
    op("repos_delete", "Delete a repository", method="DELETE", path="/repos/{owner}/{repo}"),
    op("repos_get", "Get a repository", method="GET", path="/repos/{owner}/{repo}"),
    op(
        "repos_list_for_user", "List repositories for a user", method="GET", path="/users/{u}/repos"
    ),
    op(
        "repos_list_for_authenticated_user",
        "List repositories for the authenticated user",
        method="GET",
        path="/user/repos",
    ),
    op("issues_create", "Create an issue", method="POST", path="/repos/{owner}/{repo}/issues"),
    op(
        "issues_list_for_repo",
        "List repository issues",
        method="GET",
        path="/repos/{owner}/{repo}/issues",
        tags=("issues",),
    ),
    op(
        "pulls_request_reviewers",
        "Request reviewers for a pull request",
        method="POST",
        path="/repos/{owner}/{repo}/pulls/{n}/requested_reviewers",
    ),
    op(
        "gists_create",
        "Create a gist",
        description="Allows you to add a new gist with one or more files.",
        method="POST",
        path="/gists",
    ),
    op(
        "meta_get_zen",
        "Get the Zen of GitHub",
        description="Get a random sentence; mentions repository and issue in passing.",
        method="GET",
        path="/zen",
    ),
]


def names(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.name for h in hits]


def test_words_are_split_where_identifiers_join_them() -> None:
    analyzer = Analyzer(stemming=False)
    assert analyzer.words("reposListForOrg") == ["repos", "list", "for", "org"]
    assert analyzer.words("repos_list_for_org /repos/{owner}/{repo}") == [
        "repos",
        "list",
        "for",
        "org",
        "repos",
        "owner",
        "repo",
    ]
    assert analyzer.words("HTTPServer getURL") == ["http", "server", "get", "url"]


def test_stemming_joins_inflections() -> None:
    term = Analyzer().term
    assert term("repositories") == term("repository")
    assert term("created") == term("create") == term("creating")
    assert term("branches") == term("branch")
    assert term("statuses") == term("status")
    assert term("starred") == term("star")
    assert term("status") != term("statu")  # "us" endings are not plurals


def test_a_word_in_the_name_outranks_the_same_word_in_a_description() -> None:
    index = SearchIndex(DOCS)
    ranked = names(index.search("repository issue", 9))
    assert ranked.index("issues_list_for_repo") < ranked.index("meta_get_zen")


def test_the_operation_whose_name_the_query_covers_ranks_first() -> None:
    index = SearchIndex(DOCS)
    assert names(index.search("list the repositories of a user", 3))[0] == "repos_list_for_user"
    assert names(index.search("list my own repositories", 3))[0] == (
        "repos_list_for_authenticated_user"
    )


def test_synonyms_find_what_the_api_calls_otherwise() -> None:
    index = SearchIndex(DOCS)
    assert names(index.search("remove a repo", 1)) == ["repos_delete"]
    assert names(index.search("file a bug", 2))[0] == "issues_create"
    plain = SearchIndex(DOCS, synonyms=False)
    assert "repos_delete" not in names(plain.search("remove", 5))


def test_a_word_finds_longer_words_it_begins() -> None:
    index = SearchIndex(DOCS)
    hits = index.search("ask for a review", 3)
    assert hits[0].name == "pulls_request_reviewers"
    assert "review~reviewer" in hits[0].matched["name"]
    assert "pulls_request_reviewers" not in names(
        SearchIndex(DOCS, prefixes=False, synonyms=False).search("review", 3)
    )


def test_results_say_which_words_matched_in_which_field() -> None:
    hit = SearchIndex(DOCS).search("create a gist with files", 1)[0]
    assert hit.name == "gists_create"
    assert hit.matched["name"] == ["create", "gist"]
    assert hit.matched["summary"] == ["create", "gist"]
    assert "files" in hit.matched["description"]
    assert hit.matched["action"] == ["create"]  # POST
    assert "name: create, gist" in hit.why()


def test_allowed_filters_the_results_and_limit_caps_them() -> None:
    index = SearchIndex(DOCS)
    everything = names(index.search("repository", 10))
    assert "repos_delete" in everything
    allowed = names(index.search("repository", 10, allowed=lambda n: n != "repos_delete"))
    assert allowed == [n for n in everything if n != "repos_delete"]
    assert len(index.search("repository", 2)) == 2


def test_an_exact_name_ranks_first_and_nonsense_finds_nothing() -> None:
    index = SearchIndex(DOCS)
    assert index.search("meta_get_zen", 1)[0].name == "meta_get_zen"
    assert index.search("qwertyuiop", 5) == []
    assert index.search("", 5) == []
    assert index.search("the of and", 5) == []


def test_build_time_data_loads_into_the_same_ranking() -> None:
    built = SearchIndex(DOCS)
    data = json.loads(json.dumps(built.to_data()))
    loaded = SearchIndex(DOCS, data=data)
    assert loaded.loaded
    for query in ("delete a repository", "list my repositories", "create", "zen"):
        assert [(h.name, h.score) for h in loaded.search(query, 9)] == [
            (h.name, h.score) for h in built.search(query, 9)
        ]


def test_data_for_other_operations_or_settings_is_not_loaded() -> None:
    data = SearchIndex(DOCS).to_data()
    other = SearchIndex([*DOCS, op("extra", "An extra operation")], data=data)
    assert not other.loaded
    assert other.search("extra", 1)[0].name == "extra"
    assert not SearchIndex(DOCS, stemming=False, data=data).loaded
    assert not SearchIndex(DOCS, data={"format": "something else"}).loaded


def test_docs_from_a_generated_spec() -> None:
    """``_spec.json`` format 2: every tool entry with an ``http`` route is an operation;
    declared tools (a handler, no route) are not."""
    spec = {
        "tools": [
            {
                "definition": {
                    "name": "issues_create",
                    "title": "Create an issue",
                    "description": "Creates an issue.\n\nMore text.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"title": {"type": "string", "description": "Its title"}},
                    },
                    "outputSchema": {"type": "object"},
                },
                "http": {"method": "POST", "path": "/issues", "tags": ["issues"], "wrapped": False},
            },
            {"definition": {"name": "local_tool", "description": "A declared tool\nsecond line"}},
        ],
    }
    docs = docs_from_spec(spec)
    assert [d.name for d in docs] == ["issues_create"]
    assert docs[0].summary == "Create an issue"
    assert docs[0].parameters == (("title", "Its title"),)
    assert docs[0].tags == ("issues",)
    assert docs[0].method == "POST" and docs[0].path == "/issues"
    assert doc_from_tool({"name": "x", "description": "A tool\nsecond line"}).line == "A tool"
    assert doc_from_tool({"name": "x"}).line == ""
    index = SearchIndex(docs)
    assert index.search("make an issue", 1)[0].name == "issues_create"


def test_a_huge_query_costs_little_and_leaves_nothing_behind() -> None:
    """A caller's query is no spec: a megabyte of distinct words is answered at once (not
    in time that grows with the square of its words, blocking the server), and the words
    it brings are not remembered (the analyzer's cache would grow with every query)."""
    index = SearchIndex(DOCS)
    cached = len(index.analyzer._terms)
    words = " ".join(f"w{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{i:x}".replace("0", "o")
                     for i in range(100_000))  # fmt: skip
    started = time.monotonic()
    hits = index.search("delete a repository " + words)
    assert time.monotonic() - started < 2.0
    assert hits[0].name == "repos_delete"
    assert len(index.analyzer._terms) - cached < 100
