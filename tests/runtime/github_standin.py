"""A local stand-in for a few paths of GitHub's REST API, and a small OpenAPI spec of them.

``StandIn`` answers on 127.0.0.1 (a thread running the standard library's HTTP server):
repositories, issues, issue comments, pull requests and their files, for one repository
``octo/hello`` whose data is made here. It records every request (method, path, query,
JSON body) so tests can see what reached the "API". ``SMALL_SPEC`` is an OpenAPI 3.1
document of the same operations, named and shaped as GitHub's own spec names and shapes
them (``issues/list-for-repo`` becomes the tool ``issues_list_for_repo``), so the same
scripted tasks run against a server built from GitHub's spec and from this one.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Json = Any
OWNER, REPO = "octo", "hello"


def _user(login: str) -> dict[str, Json]:
    return {"login": login, "id": zlib.crc32(login.encode()) % 10_000, "type": "User"}


def _issue(number: int, title: str, state: str, created: str, labels: list[str]) -> Json:
    return {
        "id": 1000 + number,
        "number": number,
        "title": title,
        "state": state,
        "user": _user("mona"),
        "labels": [{"name": name} for name in labels],
        "comments": 0,
        "created_at": created,
        "updated_at": created,
        "body": f"Body of {title}",
    }


@dataclass
class Data:
    """The repository's issues, comments, pulls and pull files (changed by the calls)."""

    issues: list[Json] = field(
        default_factory=lambda: [
            _issue(7, "Crash on empty input", "open", "2026-03-02T10:00:00Z", ["bug"]),
            _issue(3, "Docs: typo in README", "open", "2026-01-15T09:30:00Z", ["docs"]),
            _issue(9, "Add dark mode", "open", "2026-04-20T16:45:00Z", ["feature"]),
            _issue(1, "First issue", "closed", "2025-12-01T08:00:00Z", []),
        ]
    )
    comments: dict[int, list[Json]] = field(default_factory=dict)
    pulls: list[Json] = field(
        default_factory=lambda: [
            {"number": 11, "title": "Fix the crash", "state": "open"},
            {"number": 12, "title": "Rewrite the guide", "state": "open"},
            {"number": 13, "title": "Bump deps", "state": "open"},
            {"number": 10, "title": "Old docs change", "state": "closed"},
        ]
    )
    files: dict[int, list[str]] = field(
        default_factory=lambda: {
            11: ["src/parser.py", "tests/test_parser.py"],
            12: ["docs/guide.md", "docs/index.md", "README.md"],
            13: ["pyproject.toml"],
            10: ["docs/old.md"],
        }
    )
    next_comment: int = 500


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Json
    headers: dict[str, str]


class StandIn:
    """The stand-in API on a free port: ``url`` is its base URL (``GITHUB_API_BASE_URL``)."""

    def __init__(self) -> None:
        self.data = Data()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.data = Data()
            self.requests.clear()

    def seen(self, method: str, pattern: str) -> list[Request]:
        """The requests with ``method`` whose path matches the regular expression."""
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # -- answering ---------------------------------------------------------------------------

    def answer(self, request: Request) -> tuple[int, Json]:
        with self._lock:
            self.requests.append(request)
            return self._route(request)

    def _route(self, request: Request) -> tuple[int, Json]:
        base = f"/repos/{OWNER}/{REPO}"
        path, method, query = request.path, request.method, request.query
        if not path.startswith(base):
            return 404, {"message": "Not Found"}
        rest = path[len(base) :]
        data = self.data
        if rest == "" and method == "GET":
            return 200, {
                "id": 42,
                "name": REPO,
                "full_name": f"{OWNER}/{REPO}",
                "owner": _user(OWNER),
                "private": False,
                "default_branch": "main",
                "open_issues_count": sum(1 for i in data.issues if i["state"] == "open"),
            }
        if rest == "/issues" and method == "GET":
            state = query.get("state", ["open"])[0]
            found = [i for i in data.issues if state == "all" or i["state"] == state]
            labels = query.get("labels", [""])[0]
            if labels:
                wanted = set(labels.split(","))
                found = [i for i in found if wanted <= {label["name"] for label in i["labels"]}]
            key = "created_at" if query.get("sort", ["created"])[0] == "created" else "updated_at"
            reverse = query.get("direction", ["desc"])[0] == "desc"
            return 200, sorted(found, key=lambda i: i[key], reverse=reverse)
        match = re.fullmatch(r"/issues/(\d+)(/comments)?", rest)
        if match:
            number = int(match[1])
            issue = next((i for i in data.issues if i["number"] == number), None)
            if issue is None:
                return 404, {"message": "Not Found"}
            if match[2] and method == "POST":
                body = request.body if isinstance(request.body, dict) else {}
                if not isinstance(body.get("body"), str):
                    return 422, {"message": "Invalid request: body is required"}
                data.next_comment += 1
                comment = {
                    "id": data.next_comment,
                    "body": body["body"],
                    "user": _user("bot"),
                    "created_at": "2026-05-01T12:00:00Z",
                    "html_url": f"https://github.com/{OWNER}/{REPO}/issues/{number}",
                }
                data.comments.setdefault(number, []).append(comment)
                issue["comments"] += 1
                return 201, comment
            if match[2]:
                return 200, data.comments.get(number, [])
            if method == "PATCH":
                issue.update({k: v for k, v in (request.body or {}).items() if k in ("state",)})
            return 200, issue
        if rest == "/pulls" and method == "GET":
            state = query.get("state", ["open"])[0]
            return 200, [
                {**p, "user": _user("mona"), "head": {"ref": f"pr-{p['number']}"}}
                for p in data.pulls
                if state == "all" or p["state"] == state
            ]
        match = re.fullmatch(r"/pulls/(\d+)/files", rest)
        if match and method == "GET":
            names = data.files.get(int(match[1]))
            if names is None:
                return 404, {"message": "Not Found"}
            return 200, [
                {"filename": n, "status": "modified", "additions": 3, "deletions": 1, "changes": 4}
                for n in names
            ]
        return 404, {"message": "Not Found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = Request(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    body,
                    {k.lower(): v for k, v in self.headers.items()},
                )
                status, payload = standin.answer(request)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        return Handler


@contextmanager
def standin() -> Iterator[StandIn]:
    running = StandIn().start()
    try:
        yield running
    finally:
        running.stop()


# -- the small spec ------------------------------------------------------------------------

_OWNER_REPO = [
    {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
    {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
]
_USER = {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}
_ISSUE = {
    "type": "object",
    "properties": {
        "number": {"type": "integer"},
        "title": {"type": "string"},
        "state": {"type": "string"},
        "user": {"$ref": "#/components/schemas/user"},
        "labels": {"type": "array", "items": {"type": "object"}},
        "comments": {"type": "integer"},
        "created_at": {"type": "string", "format": "date-time"},
    },
    "required": ["number", "title", "state", "created_at"],
}


def _json(schema: Json, status: str = "200") -> Json:
    return {status: {"description": "OK", "content": {"application/json": {"schema": schema}}}}


def _number(name: str) -> Json:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "integer"}}


SMALL_SPEC: dict[str, Json] = {
    "openapi": "3.1.0",
    "info": {"title": "Octo", "version": "1.0.0", "description": "A few of GitHub's paths."},
    "servers": [{"url": "https://api.github.com"}],
    "components": {
        "schemas": {
            "user": _USER,
            "issue": _ISSUE,
            "comment": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "body": {"type": "string"},
                    "user": {"$ref": "#/components/schemas/user"},
                },
                "required": ["id", "body"],
            },
        }
    },
    "paths": {
        "/repos/{owner}/{repo}": {
            "get": {
                "operationId": "repos/get",
                "summary": "Get a repository",
                "tags": ["repos"],
                "parameters": _OWNER_REPO,
                "responses": _json(
                    {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "full_name": {"type": "string"},
                            "default_branch": {"type": "string"},
                            "open_issues_count": {"type": "integer"},
                        },
                    }
                ),
            }
        },
        "/repos/{owner}/{repo}/issues": {
            "get": {
                "operationId": "issues/list-for-repo",
                "summary": "List repository issues",
                "description": "List issues in a repository. Only open issues will be listed.",
                "tags": ["issues"],
                "parameters": [
                    *_OWNER_REPO,
                    {
                        "name": "state",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["open", "closed", "all"]},
                    },
                    {"name": "labels", "in": "query", "schema": {"type": "string"}},
                    {
                        "name": "sort",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["created", "updated"]},
                    },
                    {
                        "name": "direction",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["asc", "desc"]},
                    },
                ],
                "responses": _json(
                    {"type": "array", "items": {"$ref": "#/components/schemas/issue"}}
                ),
            }
        },
        "/repos/{owner}/{repo}/issues/{issue_number}": {
            "patch": {
                "operationId": "issues/update",
                "summary": "Update an issue",
                "tags": ["issues"],
                "parameters": [*_OWNER_REPO, _number("issue_number")],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "state": {"type": "string", "enum": ["open", "closed"]}
                                },
                            }
                        }
                    }
                },
                "responses": _json({"$ref": "#/components/schemas/issue"}),
            }
        },
        "/repos/{owner}/{repo}/issues/{issue_number}/comments": {
            "get": {
                "operationId": "issues/list-comments",
                "summary": "List issue comments",
                "tags": ["issues"],
                "parameters": [*_OWNER_REPO, _number("issue_number")],
                "responses": _json(
                    {"type": "array", "items": {"$ref": "#/components/schemas/comment"}}
                ),
            },
            "post": {
                "operationId": "issues/create-comment",
                "summary": "Create an issue comment",
                "tags": ["issues"],
                "parameters": [*_OWNER_REPO, _number("issue_number")],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"body": {"type": "string"}},
                                "required": ["body"],
                            }
                        }
                    },
                },
                "responses": _json({"$ref": "#/components/schemas/comment"}, "201"),
            },
        },
        "/repos/{owner}/{repo}/pulls": {
            "get": {
                "operationId": "pulls/list",
                "summary": "List pull requests",
                "tags": ["pulls"],
                "parameters": [
                    *_OWNER_REPO,
                    {
                        "name": "state",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["open", "closed", "all"]},
                    },
                ],
                "responses": _json(
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "number": {"type": "integer"},
                                "title": {"type": "string"},
                                "state": {"type": "string"},
                            },
                            "required": ["number", "title"],
                        },
                    }
                ),
            }
        },
        "/repos/{owner}/{repo}/pulls/{pull_number}/files": {
            "get": {
                "operationId": "pulls/list-files",
                "summary": "List pull requests files",
                "tags": ["pulls"],
                "parameters": [*_OWNER_REPO, _number("pull_number")],
                "responses": _json(
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "filename": {"type": "string"},
                                "status": {"type": "string"},
                                "additions": {"type": "integer"},
                            },
                            "required": ["filename"],
                        },
                    }
                ),
            }
        },
    },
}
