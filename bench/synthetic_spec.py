"""A deterministic synthetic OpenAPI 3.0 spec with the shape of GitHub's REST description.

GitHub's ``api.github.com.json`` is the usual "big real-world spec" (about 1,100
operations, 900+ component schemas, ~12 MB). It is not vendored here; this script makes a
spec of the same shape from a seed, so the benchmarks need no download:

* ``components.schemas``: objects with 4-30 properties (string formats, integers, enums,
  arrays, nested inline objects, nullable fields), ``$ref`` chains to earlier schemas with a
  few heavily referenced "hub" schemas (like ``simple-user`` / ``repository``), ``allOf``
  extensions, ``oneOf`` unions, ``nullable-*`` twins, top-level enums and array aliases;
* ``components.parameters`` / ``responses`` / ``headers`` / ``examples`` shared by reference;
* ``paths``: GitHub-style routes (``/repos/{owner}/{repo}/...``) with ``operationId`` such as
  ``repos/get-branch``, path/query/header parameters (inline and by ``$ref``), JSON request
  bodies for POST/PUT/PATCH, success responses with examples, error responses by ``$ref``,
  ``tags``, ``externalDocs`` and ``x-github`` extensions.

Only references to *earlier* schemas are generated, so the graph is acyclic. Same
arguments, same bytes. Server URL is 127.0.0.1 so nothing generated from it can reach out.

    python bench/synthetic_spec.py -o /tmp/github-like.json            # ~1,200 ops, ~13 MB
    python bench/synthetic_spec.py --operations 50 --schemas 40 -o /tmp/small.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

Json = Any

CATEGORIES = [
    "actions", "activity", "apps", "billing", "checks", "classroom", "code-scanning",
    "codes-of-conduct", "codespaces", "copilot", "dependabot", "dependency-graph", "emojis",
    "gists", "git", "gitignore", "interactions", "issues", "licenses", "markdown", "meta",
    "migrations", "oidc", "orgs", "packages", "projects", "pulls", "rate-limit", "reactions",
    "repos", "search", "secret-scanning", "security-advisories", "teams", "users", "webhooks",
    "environments", "deployments", "branches", "commits", "releases", "pages", "collaborators",
    "credentials", "announcements",
]  # fmt: skip
NOUNS = [
    "alert", "analysis", "annotation", "artifact", "assignee", "autolink", "blob", "branch",
    "cache", "check-run", "check-suite", "codespace", "collaborator", "comment", "commit",
    "deployment", "discussion", "environment", "event", "file", "fork", "gist", "hook",
    "installation", "invitation", "issue", "job", "key", "label", "license", "member",
    "migration", "milestone", "package", "page", "project", "protection", "pull", "reaction",
    "release", "repository", "review", "rule", "ruleset", "runner", "secret", "status",
    "subscription", "tag", "team", "tree", "variable", "version", "workflow", "run", "card",
    "column", "seat", "token", "advisory", "credential", "delivery", "domain", "group",
    "policy", "summary", "setting", "permission", "template", "usage", "budget", "report",
]  # fmt: skip
QUALIFIERS = [
    "simple", "full", "minimal", "public", "private", "org", "repo", "enterprise", "user",
    "nullable", "detailed", "legacy", "global", "scoped", "team", "app", "base", "linked",
]  # fmt: skip
FIELDS = [
    "id", "node_id", "name", "full_name", "description", "url", "html_url", "api_url",
    "created_at", "updated_at", "closed_at", "pushed_at", "state", "status", "conclusion",
    "title", "body", "number", "sha", "ref", "path", "size", "count", "total_count", "login",
    "email", "type", "visibility", "private", "archived", "disabled", "locked", "default",
    "enabled", "position", "content_type", "labels_url", "events_url", "owner", "author",
    "committer", "creator", "head", "base", "language", "license", "topics", "permissions",
    "score", "priority", "severity", "category", "reason", "message", "tag_name", "version",
    "download_count", "expires_at", "started_at", "completed_at", "run_attempt", "workflow_id",
    "head_branch", "head_sha", "event", "display_title", "actor", "environment", "payload",
    "scopes", "token", "fingerprint", "key", "value", "selected", "secret_type", "resolution",
    "dismissed_reason", "dismissed_comment", "rule", "tool", "most_recent_instance", "labels",
    "assignees", "milestone", "reactions", "plan", "seats", "filled_seats", "usage",
    "billable", "quantity", "unit_type", "price_per_unit", "net_amount", "discount_amount",
]  # fmt: skip
WORDS = [
    "the",
    "a",
    "an",
    "of",
    "to",
    "for",
    "with",
    "on",
    "in",
    "by",
    "from",
    "this",
    "that",
    "repository",
    "organization",
    "user",
    "team",
    "returns",
    "lists",
    "gets",
    "creates",
    "updates",
    "deletes",
    "request",
    "response",
    "resource",
    "token",
    "access",
    "permission",
    "scope",
    "fine-grained",
    "personal",
    "app",
    "installation",
    "endpoint",
    "field",
    "value",
    "object",
    "array",
    "string",
    "integer",
    "enterprise",
    "workflow",
    "run",
    "job",
    "check",
    "status",
    "commit",
    "branch",
    "tag",
    "release",
    "pull",
    "issue",
    "comment",
    "review",
    "label",
    "milestone",
    "project",
    "card",
    "column",
    "secret",
    "variable",
    "runner",
    "group",
    "alert",
    "rule",
    "policy",
    "setting",
    "optional",
    "required",
    "default",
    "only",
    "when",
    "must",
    "may",
    "should",
    "can",
    "cannot",
    "also",
    "if",
    "not",
    "is",
    "are",
    "be",
    "will",
    "see",
    "more",
    "information",
    "about",
    "using",
    "authenticated",
    "parameter",
    "header",
    "query",
    "body",
    "returned",
    "results",
    "page",
    "per",
    "sorted",
    "direction",
    "ascending",
    "descending",
    "since",
    "before",
    "after",
    "timestamp",
    "ISO",
    "8601",
    "format",
]
STRING_FORMATS = ["date-time", "uri", "email", "date", None, None, None, None]
ENUM_POOL = [
    "open", "closed", "all", "merged", "draft", "published", "pending", "queued",
    "in_progress", "completed", "success", "failure", "neutral", "cancelled", "skipped",
    "timed_out", "action_required", "stale", "public", "private", "internal", "admin",
    "write", "read", "maintain", "triage", "low", "medium", "high", "critical", "created",
    "updated", "pushed", "full_name", "asc", "desc", "enabled", "disabled", "fixed",
    "dismissed", "auto_dismissed", "resolved", "active", "inactive", "none", "selected",
]  # fmt: skip
HUB_FRACTION = 0.05
# A schema of level L refers only to schemas of lower levels, so a fully dereferenced schema
# stays bounded (GitHub's deepest chains are a handful of refs: pull-request -> repository ->
# simple-user). Weights of the levels new schemas get, and of the levels refs go to.
LEVEL_WEIGHTS = [30, 25, 20, 15, 10]
TARGET_LEVEL_WEIGHTS = [5, 3, 2, 1, 1]
REF_PROBABILITY = 0.10
METHOD_VERBS = {"get": "get", "post": "create", "put": "set", "patch": "update", "delete": "delete"}


class Generator:
    def __init__(self, operations: int, schemas: int, seed: int) -> None:
        self.n_ops = operations
        self.n_schemas = max(schemas, 6)
        self.rng = random.Random(seed)
        self.schemas: dict[str, Json] = {}
        self.object_names: list[str] = []  # schemas that are plain/allOf objects
        self.by_level: list[list[str]] = [[] for _ in LEVEL_WEIGHTS]  # object schemas per level
        self.cap = len(LEVEL_WEIGHTS)  # refs go to levels below this (the schema being built)
        self.examples: dict[str, Json] = {}
        self.parameters: dict[str, Json] = {}
        self.operation_ids: set[str] = set()

    # -- text -------------------------------------------------------------------------
    def words(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi)
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def sentence(self, lo: int = 6, hi: int = 18) -> str:
        text = self.words(lo, hi)
        return text[:1].upper() + text[1:] + "."

    def paragraph(self, lo: int = 2, hi: int = 5) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(lo, hi)))

    # -- schemas ----------------------------------------------------------------------
    def ref(self, name: str) -> Json:
        return {"$ref": f"#/components/schemas/{name}"}

    def add_object(self, name: str, level: int) -> None:
        self.object_names.append(name)
        self.by_level[level].append(name)

    def pick_ref_target(self) -> str | None:
        levels = [lv for lv in range(min(self.cap, len(self.by_level))) if self.by_level[lv]]
        if not levels:
            return None
        level = self.rng.choices(levels, [TARGET_LEVEL_WEIGHTS[lv] for lv in levels])[0]
        pool = self.by_level[level]
        hubs = max(1, int(len(pool) * HUB_FRACTION))
        if self.rng.random() < 0.5:
            return pool[self.rng.randrange(min(hubs, len(pool)))]
        return self.rng.choice(pool)

    def primitive(self, field: str) -> Json:
        r = self.rng.random()
        if field in ("id", "number", "size", "count", "total_count", "position") or r < 0.22:
            schema: Json = {"type": "integer", "example": self.rng.randint(1, 99999)}
            if self.rng.random() < 0.3:
                schema["format"] = "int64"
            return schema
        if r < 0.32:
            return {"type": "boolean", "example": self.rng.random() < 0.5}
        if r < 0.38:
            return {"type": "number", "example": round(self.rng.uniform(0, 1000), 2)}
        if r < 0.50:
            values = self.rng.sample(ENUM_POOL, self.rng.randint(2, 7))
            return {"type": "string", "enum": values, "example": values[0]}
        schema = {"type": "string"}
        fmt = self.rng.choice(STRING_FORMATS)
        if field.endswith("_at"):
            fmt = "date-time"
        elif field.endswith("url"):
            fmt = "uri"
        if fmt:
            schema["format"] = fmt
        schema["example"] = {
            "date-time": "2011-01-26T19:01:12Z",
            "uri": f"https://api.github.example/{field}",
            "email": "octocat@github.example",
            "date": "2011-01-26",
            None: self.words(1, 3),
        }[fmt]
        if fmt is None and self.rng.random() < 0.15:
            schema["maxLength"] = self.rng.choice([40, 100, 255, 1024])
        return schema

    def property_schema(self, field: str, depth: int) -> Json:
        r = self.rng.random()
        target = self.pick_ref_target() if r < REF_PROBABILITY else None
        if target is not None:
            if self.rng.random() < 0.25:
                return {"allOf": [self.ref(target)], "nullable": True}
            return self.ref(target)
        if r < REF_PROBABILITY + 0.07:
            items: Json = {"type": "string"}
            if self.rng.random() < 0.5:
                item_target = self.pick_ref_target()
                if item_target is not None:
                    items = self.ref(item_target)
            return {"type": "array", "items": items, "description": self.sentence()}
        if r < REF_PROBABILITY + 0.12 and depth < 2:
            return self.object_schema(self.rng.randint(2, 6), depth + 1)
        if r < REF_PROBABILITY + 0.14:
            return {
                "oneOf": [{"type": "string"}, {"type": "integer"}],
                "description": self.sentence(),
            }
        if r < REF_PROBABILITY + 0.16:
            return {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": self.sentence(),
            }
        schema = self.primitive(field)
        schema["description"] = self.sentence()
        if self.rng.random() < 0.12:
            schema["nullable"] = True
        return schema

    def object_schema(self, n_props: int, depth: int = 0) -> Json:
        fields = self.rng.sample(FIELDS, min(n_props, len(FIELDS)))
        props = {f: self.property_schema(f, depth) for f in fields}
        required = sorted(f for f in fields if self.rng.random() < 0.5)
        schema: Json = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        return schema

    def schema_name(self, index: int) -> str:
        base = f"{self.rng.choice(QUALIFIERS)}-{self.rng.choice(NOUNS)}"
        if self.rng.random() < 0.4:
            base = f"{self.rng.choice(CATEGORIES)}-{self.rng.choice(NOUNS)}"
        name, k = base, 2
        while name in self.schemas:
            name, k = f"{base}-{k}", k + 1
        return name

    def core_schemas(self) -> None:
        self.schemas["basic-error"] = {
            "title": "Basic Error",
            "description": "Basic Error",
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "documentation_url": {"type": "string"},
                "url": {"type": "string"},
                "status": {"type": "string"},
            },
        }
        self.schemas["validation-error"] = {
            "title": "Validation Error",
            "description": "Validation Error",
            "type": "object",
            "required": ["message", "documentation_url"],
            "properties": {
                "message": {"type": "string"},
                "documentation_url": {"type": "string"},
                "errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["code"],
                        "properties": {
                            "resource": {"type": "string"},
                            "field": {"type": "string"},
                            "message": {"type": "string"},
                            "code": {"type": "string"},
                            "index": {"type": "integer"},
                            "value": {
                                "oneOf": [
                                    {"type": "string", "nullable": True},
                                    {"type": "integer", "nullable": True},
                                    {
                                        "type": "array",
                                        "nullable": True,
                                        "items": {"type": "string"},
                                    },
                                ]
                            },
                        },
                    },
                },
            },
        }
        user = self.object_schema(20)
        user.update(title="Simple User", description="A GitHub user.")
        self.schemas["simple-user"] = user
        self.schemas["nullable-simple-user"] = {**json.loads(json.dumps(user)), "nullable": True}
        self.add_object("simple-user", 0)
        self.cap = 1
        repo = self.object_schema(30)
        repo["properties"]["owner"] = self.ref("simple-user")
        repo.update(title="Repository", description="A repository on GitHub.")
        self.schemas["repository"] = repo
        self.add_object("repository", 1)
        self.schemas["alert-state"] = {
            "type": "string",
            "description": "State of an alert.",
            "enum": ["open", "dismissed", "fixed", "resolved"],
        }

    def generate_schemas(self) -> None:
        self.core_schemas()
        while len(self.schemas) < self.n_schemas:
            name = self.schema_name(len(self.schemas))
            r = self.rng.random()
            level = self.rng.choices(range(len(LEVEL_WEIGHTS)), LEVEL_WEIGHTS)[0]
            self.cap = level
            schema: Json
            if r < 0.70 or len(self.object_names) < 4 or level == 0:
                n = int(self.rng.triangular(4, 50, 20))
                schema = self.object_schema(n)
                schema["title"] = name.replace("-", " ").title()
                schema["description"] = self.paragraph(2, 5)
                self.add_object(name, level)
            elif r < 0.78:
                base = self.pick_ref_target() or self.object_names[0]
                schema = {"title": f"Nullable {base}", "allOf": [self.ref(base)], "nullable": True}
                schema["description"] = self.sentence()
                name = f"nullable-{name}"
            elif r < 0.86:
                base = self.pick_ref_target() or self.object_names[0]
                extra = self.object_schema(self.rng.randint(2, 8))
                schema = {"allOf": [self.ref(base), extra], "description": self.paragraph(1, 2)}
                self.add_object(name, level)
            elif r < 0.91:
                a = self.pick_ref_target() or self.object_names[0]
                b = self.pick_ref_target() or self.object_names[-1]
                schema = {"oneOf": [self.ref(a), self.ref(b)], "description": self.sentence()}
            elif r < 0.95:
                values = self.rng.sample(ENUM_POOL, self.rng.randint(3, 9))
                schema = {"type": "string", "enum": values, "description": self.sentence()}
            else:
                schema = {
                    "type": "array",
                    "items": self.ref(self.pick_ref_target() or self.object_names[0]),
                    "description": self.sentence(),
                }
            self.schemas[name] = schema

    # -- example instances --------------------------------------------------------------
    def instance(self, schema: Json, depth: int = 0) -> Json:
        if "$ref" in schema:
            target = self.schemas[schema["$ref"].rsplit("/", 1)[1]]
            return self.instance(target, depth + 1) if depth < 4 else None
        if "allOf" in schema:
            merged: Json = {}
            for part in schema["allOf"]:
                value = self.instance(part, depth)
                if isinstance(value, dict):
                    merged.update(value)
            return merged
        if "oneOf" in schema:
            return self.instance(schema["oneOf"][0], depth)
        if "example" in schema:
            return schema["example"]
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties", {})
            return {k: self.instance(v, depth + 1) for k, v in props.items()} if depth < 4 else {}
        if kind == "array":
            return [self.instance(schema["items"], depth + 1)] if depth < 4 else []
        return {"integer": 1, "number": 1.5, "boolean": True}.get(kind, "string")

    def example_ref(self, schema_name: str, many: bool) -> Json:
        key = f"{schema_name}-items" if many else schema_name
        if key not in self.examples:
            value = self.instance(self.ref(schema_name))
            self.examples[key] = {
                "value": [value, self.instance(self.ref(schema_name))] if many else value
            }
        return {"default": {"$ref": f"#/components/examples/{key}"}}

    # -- parameters, responses ----------------------------------------------------------
    def shared_parameters(self) -> None:
        def path_param(name: str, kind: str, description: str) -> Json:
            return {
                "name": name,
                "description": description,
                "in": "path",
                "required": True,
                "schema": {"type": kind},
            }

        params: dict[str, Json] = {
            "owner": path_param("owner", "string", "The account owner of the repository."),
            "repo": path_param("repo", "string", "The name of the repository without `.git`."),
            "org": path_param("org", "string", "The organization name. Not case sensitive."),
            "username": path_param("username", "string", "The handle for the GitHub user account."),
            "enterprise": path_param(
                "enterprise", "string", "The slug version of the enterprise name."
            ),
            "team-slug": path_param("team_slug", "string", "The slug of the team name."),
            "per-page": {
                "name": "per_page",
                "description": "The number of results per page (max 100).",
                "in": "query",
                "schema": {"type": "integer", "default": 30},
            },
            "page": {
                "name": "page",
                "description": "The page number of the results to fetch.",
                "in": "query",
                "schema": {"type": "integer", "default": 1},
            },
            "since": {
                "name": "since",
                "description": "Only show results that were last updated after the given time.",
                "in": "query",
                "schema": {"type": "string", "format": "date-time"},
            },
            "direction": {
                "name": "direction",
                "description": "The direction to sort the results by.",
                "in": "query",
                "schema": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
            },
            "sort": {
                "name": "sort",
                "description": "The property to sort the results by.",
                "in": "query",
                "schema": {"type": "string", "enum": ["created", "updated"], "default": "created"},
            },
        }
        for noun in NOUNS:
            key = f"{noun}-id"
            params[key] = path_param(
                noun.replace("-", "_") + "_id", "integer", f"The unique identifier of the {noun}."
            )
        self.parameters = params

    def shared_responses(self) -> Json:
        def error(description: str, schema: str) -> Json:
            return {
                "description": description,
                "content": {"application/json": {"schema": self.ref(schema)}},
            }

        return {
            "not_found": error("Resource not found", "basic-error"),
            "forbidden": error("Forbidden", "basic-error"),
            "requires_authentication": error("Requires authentication", "basic-error"),
            "validation_failed": error(
                "Validation failed, or the endpoint has been spammed.", "validation-error"
            ),
            "gone": error("Gone", "basic-error"),
            "conflict": error("Conflict", "basic-error"),
            "bad_request": error("Bad Request", "basic-error"),
            "not_modified": {"description": "Not modified"},
            "accepted": {
                "description": "Accepted",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            "service_unavailable": {
                "description": "Service unavailable",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                                "documentation_url": {"type": "string"},
                            },
                        }
                    }
                },
            },
        }

    # -- paths --------------------------------------------------------------------------
    def param_ref(self, key: str) -> Json:
        return {"$ref": f"#/components/parameters/{key}"}

    def route(self) -> tuple[str, list[Json]]:
        """A GitHub-style path and its path parameters."""
        rng = self.rng
        roots = [
            ("/repos/{owner}/{repo}", ["owner", "repo"]),
            ("/orgs/{org}", ["org"]),
            ("/users/{username}", ["username"]),
            ("/enterprises/{enterprise}", ["enterprise"]),
            ("/orgs/{org}/teams/{team_slug}", ["org", "team-slug"]),
            ("/user", []),
            ("", []),
        ]
        prefix, keys = roots[min(int(rng.expovariate(0.45)), len(roots) - 1)]
        parts = [prefix]
        params = [self.param_ref(k) for k in keys]
        for _ in range(rng.randint(1, 3)):
            noun = rng.choice(NOUNS)
            parts.append(f"/{noun}s")
            if rng.random() < 0.45:
                key = f"{noun}-id"
                name = self.parameters[key]["name"]
                if any(p.get("$ref", "").endswith("/" + key) for p in params):
                    continue
                parts.append(f"/{{{name}}}")
                if rng.random() < 0.8:
                    params.append(self.param_ref(key))
                else:
                    params.append(
                        {
                            "name": name,
                            "in": "path",
                            "required": True,
                            "description": self.sentence(),
                            "schema": {"type": "integer"},
                        }
                    )
        return "".join(parts), params

    def operation_id(self, tag: str, method: str, path: str, listing: bool) -> str:
        noun = path.rstrip("/").rsplit("/", 1)[-1].strip("{}").replace("_id", "")
        verb = "list" if listing else METHOD_VERBS[method]
        base = f"{tag}/{verb}-{noun}".rstrip("s") if not listing else f"{tag}/{verb}-{noun}"
        op_id, k = base, 2
        while op_id in self.operation_ids:
            op_id, k = f"{base}-{k}", k + 1
        self.operation_ids.add(op_id)
        return op_id

    def request_body(self) -> Json:
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            schema = self.ref(rng.choice(self.object_names))
        elif r < 0.32:
            _, b = rng.sample(self.object_names, 2)
            schema = {"oneOf": [self.object_schema(rng.randint(1, 4)), self.ref(b)]}
        else:
            schema = self.object_schema(int(rng.triangular(1, 14, 4)))
            for prop in schema["properties"].values():
                prop.setdefault("description", self.sentence())
        body: Json = {
            "required": rng.random() < 0.8,
            "content": {"application/json": {"schema": schema}},
        }
        if rng.random() < 0.6:
            body["content"]["application/json"]["examples"] = {
                "default": {"value": self.instance(schema)}
            }
        return body

    def operation(self, tag: str, method: str, path: str, path_params: list[Json]) -> Json:
        rng = self.rng
        listing = method == "get" and not path.endswith("}")
        target = rng.choice(self.object_names)
        op: Json = {
            "summary": self.words(3, 7).capitalize(),
            "description": self.paragraph(2, 7),
            "tags": [tag],
            "operationId": self.operation_id(tag, method, path, listing),
            "externalDocs": {
                "description": "API method documentation",
                "url": f"https://docs.github.example/rest/{tag}#{rng.randrange(10**6)}",
            },
            "parameters": list(path_params),
        }
        if listing:
            op["parameters"] += [self.param_ref("per-page"), self.param_ref("page")]
            for key in ("since", "direction", "sort"):
                if rng.random() < 0.3:
                    op["parameters"].append(self.param_ref(key))
        for _ in range(rng.choices([0, 1, 2, 3], [5, 3, 2, 1])[0]):
            name = rng.choice(FIELDS)
            if any(p.get("name") == name for p in op["parameters"]):
                continue
            schema = self.primitive(name)
            schema.pop("example", None)
            op["parameters"].append(
                {
                    "name": name,
                    "description": self.sentence(),
                    "in": "query",
                    "required": False,
                    "schema": schema,
                }
            )
        if rng.random() < 0.06:
            op["parameters"].append(
                {
                    "name": rng.choice(["X-GitHub-Api-Version", "If-None-Match", "X-Request-Tag"]),
                    "description": self.sentence(),
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                }
            )
        if not op["parameters"]:
            del op["parameters"]
        if method in ("post", "put", "patch") and rng.random() < 0.85:
            op["requestBody"] = self.request_body()
        responses: Json = {}
        if method == "delete" or (method == "put" and rng.random() < 0.4):
            responses["204"] = {"description": "Response"}
        else:
            code = "201" if method == "post" else "200"
            schema = {"type": "array", "items": self.ref(target)} if listing else self.ref(target)
            content: Json = {"schema": schema}
            if rng.random() < 0.9:
                content["examples"] = self.example_ref(target, listing)
            responses[code] = {"description": "Response", "content": {"application/json": content}}
            if listing:
                responses[code]["headers"] = {"Link": {"$ref": "#/components/headers/link"}}
        for status, key in (
            ("304", "not_modified"),
            ("403", "forbidden"),
            ("404", "not_found"),
            ("422", "validation_failed"),
        ):
            if rng.random() < 0.45:
                responses[status] = {"$ref": f"#/components/responses/{key}"}
        op["responses"] = responses
        op["x-github"] = {
            "githubCloudOnly": rng.random() < 0.1,
            "enabledForGitHubApps": rng.random() < 0.8,
            "category": tag,
            "subcategory": rng.choice(NOUNS),
        }
        return op

    def generate_paths(self) -> Json:
        self.cap = len(LEVEL_WEIGHTS)  # operations may refer to any schema
        paths: Json = {}
        count = 0
        while count < self.n_ops:
            path, params = self.route()
            item = paths.setdefault(path, {})
            tag = self.rng.choice(CATEGORIES)
            methods = ["get"] if path.endswith("s") else ["get", "patch", "put", "delete"]
            if path.endswith("s"):
                methods += ["post"] if self.rng.random() < 0.6 else []
            for method in methods:
                if count >= self.n_ops:
                    break
                if method in item or (method != "get" and self.rng.random() < 0.35):
                    continue
                item[method] = self.operation(tag, method, path, params)
                count += 1
            if not item:
                del paths[path]
        return dict(sorted(paths.items()))

    def build(self) -> Json:
        self.generate_schemas()
        self.shared_parameters()
        responses = self.shared_responses()
        paths = self.generate_paths()
        used_params = json.dumps(paths)
        parameters = {
            k: v
            for k, v in self.parameters.items()
            if f'#/components/parameters/{k}"' in used_params
        }
        return {
            "openapi": "3.0.3",
            "info": {
                "version": "1.1.4",
                "title": "GitHub-like v3 REST API (synthetic)",
                "description": "A deterministic synthetic spec with the shape of GitHub's REST API.",
                "license": {"name": "MIT", "url": "https://spdx.org/licenses/MIT"},
                "contact": {"name": "Support", "url": "https://support.github.example"},
                "x-github-plan": "api.github.com",
            },
            "tags": [{"name": c, "description": self.sentence()} for c in CATEGORIES],
            "servers": [{"url": "http://127.0.0.1:9"}],
            "externalDocs": {
                "description": "REST API docs",
                "url": "https://docs.github.example/rest/",
            },
            "paths": paths,
            "components": {
                "schemas": self.schemas,
                "examples": dict(sorted(self.examples.items())),
                "parameters": parameters,
                "responses": responses,
                "headers": {
                    "link": {
                        "example": '<https://api.github.example/x?page=2>; rel="next"',
                        "schema": {"type": "string"},
                    },
                    "content-type": {"example": "text/html", "schema": {"type": "string"}},
                    "x-rate-limit-limit": {"example": 5000, "schema": {"type": "integer"}},
                    "x-rate-limit-remaining": {"example": 4999, "schema": {"type": "integer"}},
                    "location": {
                        "example": "https://pipelines.actions.example/x",
                        "schema": {"type": "string"},
                    },
                },
            },
        }


def count_operations(spec: Json) -> int:
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    return sum(1 for item in spec["paths"].values() for m in item if m in methods)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--operations", type=int, default=1200, help="operations to generate (default 1200)"
    )
    parser.add_argument(
        "--schemas", type=int, default=1000, help="component schemas (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--compact", action="store_true", help="no indentation (GitHub's file is indented)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a small spec: 60 operations, 50 schemas"
    )
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = parser.parse_args(argv)
    if args.quick:
        args.operations, args.schemas = 60, 50
    spec = Generator(args.operations, args.schemas, args.seed).build()
    text = json.dumps(spec, indent=None if args.compact else 2, ensure_ascii=False) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    comps = spec["components"]
    print(
        f"synthetic_spec: {count_operations(spec)} operations on {len(spec['paths'])} paths, "
        f"{len(comps['schemas'])} schemas, {len(comps['parameters'])} shared parameters, "
        f"{len(comps['examples'])} examples, {len(text.encode()) / 1e6:.1f} MB"
        + ("" if args.output == "-" else f" -> {args.output}"),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
