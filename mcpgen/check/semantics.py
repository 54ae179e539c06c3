"""Stage two of validation: what the schema cannot say (names, references, files, templates)
on the entries the structural check found well formed (``view``)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from mcpgen import identifiers as names
from mcpgen.check import ref_depth, schemas, uritemplate
from mcpgen.check.auth import check_auth, check_credentials
from mcpgen.check.checker import Checker
from mcpgen.check.names import check_python_names, class_name_problem, model_name_problem
from mcpgen.check.prompts import check_completions, check_prompts
from mcpgen.check.structure import did_you_mean, entries
from mcpgen.check.unmeetable import unmeetable
from mcpgen.load import Document, JsonPath, dotted
from mcpgen.load.json_text import too_deep
from mcpgen.model.names import root_ref
from mcpgen.model.types import mode_tools
from mcpgen.problems import Level, Problem, Problems
from mcpgen.vendoring import EXTRA_LIBRARIES, REQUIREMENTS

MAX_SCHEMA_DEPTH = 64  # keywords and property names both count: properties.x is two levels
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# What a generated package imports by its top-level name: a package of that name hides it.
TAKEN_PACKAGES = frozenset(
    {*sys.stdlib_module_names, *REQUIREMENTS, *EXTRA_LIBRARIES}
    | {"typing_extensions", "pydantic_core", "pytest"}
)
DEF_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # what the manifest schema allows


class _Semantics(Checker):
    """The checks of the whole document's own sections (``check_semantics`` runs them)."""

    def check_server(self) -> None:
        version = self.data["server"].get("version")
        if isinstance(version, str) and names.package_version(version) != version:
            from packaging.version import InvalidVersion, Version

            try:
                Version(version)
            except InvalidVersion:
                self.warn(
                    ("server", "version"),
                    f"{version!r} is not a PEP 440 version: the package is versioned "
                    f"{names.package_version(version)!r} (clients still see {version!r})",
                )
        package = self.data["server"].get("package")
        if package is not None and package in names.RESERVED:
            self.error(("server", "package"), f"{package!r} is a Python keyword or builtin")
        elif package in TAKEN_PACKAGES:
            self.error(
                ("server", "package"),
                f"{package!r} is a module of Python's standard library or of a library the "
                "generated code imports: the package would hide it",
            )

    def check_defs(self) -> None:
        shared = self.data["$defs"]
        for name in sorted(shared):
            if DEF_NAME.match(name) and not names.kept_class_name(name):  # else: structure
                self.error(("$defs", name), class_name_problem(name), key=True)
            self.check_schema(("$defs", name), shared[name], None)
            self.ref_cycles(("$defs", name), shared[name], None)

    def check_schema(self, where: JsonPath, schema: Any, own_root: Any) -> None:
        deep = _deeper_than(schema, MAX_SCHEMA_DEPTH)
        if deep is not None:  # later stages (and the metaschema check) recurse per level
            message = f"JSON Schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
            located = self.doc.locate((*where, *deep))
            self.problems.add(Problem(Level.ERROR, located, dotted(where), message))
            return
        # imported schemas were checked as the importer converted them: no metaschema pass
        imported = self.doc.overlay(where) is not None
        violations = [] if imported else list(schemas.metaschema_errors(schema))
        for path, message in violations:
            self.error((*where, *path), f"not a valid JSON Schema (2020-12): {message}")
        nodes = list(schemas.schema_nodes(schema))  # one walk for both checks of its nodes
        for path, message in schemas.bad_patterns(nodes):
            self.error((*where, *path), message)
        for path, message in unmeetable(nodes):
            self.error((*where, *path), message, level=Level.WARNING if imported else Level.ERROR)
        for node, trail in nodes:  # names the models spell as Python identifiers
            for key in ("properties", "$defs", "definitions"):
                for name in node[key] if isinstance(node.get(key), dict) else ():
                    if problem := model_name_problem(name, key):
                        self.error((*where, *schemas.located(trail), key, name), problem, key=True)
        if not imported and not violations:
            shared = self.data["$defs"]
            root = schemas.RefIndex(shared).bundle(own_root) if own_root else {"$defs": shared}
            for path, message in schemas.bad_defaults(schema, root):
                self.error((*where, *path), message)
        for path, message, fatal in schemas.keyword_problems(nodes, imported):
            (self.error if fatal else self.warn)((*where, *path), message)
        bad = {r for r in schemas.ref_strings(schema) if self.target(r, own_root) is None}
        for path, ref in schemas.refs(schema) if bad else ():
            if ref in bad and not ref.startswith("#"):
                self.error((*where, *path), f"only local references are supported, not {ref!r}")
            elif ref in bad:
                choices = [schemas.DEFS_PREFIX + n for n in self.data["$defs"]]
                message = f"reference {ref!r} does not resolve" + did_you_mean(ref, choices)
                self.error((*where, *path), message)

    def ref_cycles(self, where: JsonPath, schema: Any, own_root: Any) -> None:
        def resolve(ref: str) -> Any:
            found = self.target(ref, own_root)
            return None if found is None else found[1]

        self.schemas.append((where, schema, resolve))  # for ref_depth.long_inheritance too
        known = self.settled if own_root is None else {}  # (a tool's own root: its own)
        for path, ref in ref_depth.unguarded_cycles(schema, resolve, known):
            self.error(
                (*where, *path),
                f"{ref!r} leads back to this reference with no properties or items in "
                "between: the schema never describes a value (nothing could be checked "
                "against it)",
            )

    def target(self, ref: str, own_root: Any) -> tuple[JsonPath, Any] | None:
        """What a local ``$ref`` names, in its own root or else in ``$defs`` (or None)."""
        found = schemas.pointer_target(own_root, ref) if own_root is not None else None
        if found is None and ref.startswith(schemas.DEFS_PREFIX):
            found = schemas.pointer_target(self.data, ref)
        return found

    def check_tools(self) -> None:
        self.unique_names("tools", "tool", self.assigned.tools)
        upstream = self.doc.imported.upstream if self.doc.imported else None
        mode = str(upstream["mode"]) if isinstance(upstream, dict) else "tools"
        listed = "code" if mode == "auto" else mode  # (auto lists code mode's tools or none)
        own = {d["name"] for d in mode_tools(listed)}
        for index, tool in entries(self.data["tools"]):
            where: JsonPath = ("tools", index)
            name = tool["name"]
            if not TOOL_NAME.match(name):
                self.error((*where, "name"), _tool_name_problem(name))
            if name in own:  # an imported one too: the mode's tool would answer for it
                self.error(
                    (*where, "name"),
                    f"{listed} mode (openapi.mode {mode}) lists a tool {name!r} of its own; "
                    "rename this one (an operation: openapi.overrides.<operationId>.name)",
                )
            if "description" not in tool:
                self.warn(where, f"tool {name!r} has no description; models choose tools by it")
            for part in ("input", "output"):
                if part in tool:
                    self.check_schema((*where, part), tool[part], tool[part])
                    if self.doc.overlay((*where, part)) is None:  # imported: in $defs
                        self.ref_cycles((*where, part), tool[part], tool[part])
                given = tool.get(part, {"type": "object"})
                shared = root_ref(given, self.data["$defs"])  # what the model inlines
                schema = given if shared is None else self.data["$defs"][shared]
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    at: JsonPath = (*where, part)
                    message = f"a tool's {part} schema must have 'type: object'"
                    if schema is given and isinstance(schema, dict) and "type" in schema:
                        at = (*at, "type")
                        message += f", not {json.dumps(schema['type'], ensure_ascii=False)}"
                    self.error(at, message)
            annotations = tool.get("annotations", {})
            if annotations.get("readOnlyHint") and annotations.get("destructiveHint"):
                self.warn((*where, "annotations"), "a read-only tool cannot also be destructive")

    def check_resources(self) -> dict[str, list[str]]:
        resources = self.data["resources"]
        self.unique_names("resources", "resource", self.assigned.resources)
        self.unique(resources, "uri", ("resources",), "resource URI")
        self.unique(resources, "uriTemplate", ("resources",), "URI template")
        templates: dict[str, list[str]] = {}
        shapes: dict[str, tuple[str, JsonPath]] = {}
        for index, resource in entries(resources):
            where: JsonPath = ("resources", index)
            static = [k for k in ("text", "blob", "file") if k in resource]
            if len(static) > 1:
                self.error((*where, static[1]), "give at most one of 'text', 'blob' or 'file'")
            if "uriTemplate" in resource:
                template, at = resource["uriTemplate"], (*where, "uriTemplate")
                variables, problem = uritemplate.parse(template)
                if problem:
                    self.error(at, problem)
                else:  # refuse one that matches exactly the URIs of an earlier one
                    other, first = shapes.setdefault(uritemplate.shape(template), (template, where))
                    if other != template:  # (an identical one is reported as a duplicate)
                        self.error(
                            at,
                            f"URI template {template!r} matches the same URIs as {other!r} "
                            f"({self.doc.field(first)}), so no read would ever reach it; "
                            "make the two differ by more than their variable names",
                        )
                    templates[template] = variables
                    templates.setdefault(resource["name"], variables)
                if static:
                    self.error(
                        (*where, static[0]),
                        "a URI template's content comes from its handler, not static content",
                    )
            elif problem := uritemplate.check_uri(resource["uri"]):
                self.error((*where, "uri"), problem)
            if "blob" in resource:
                self.check_base64((*where, "blob"), resource["blob"])
            if "file" in resource:
                self.check_file((*where, "file"), resource["file"])
            if "description" not in resource:
                self.warn(where, f"resource {resource['name']!r} has no description")
        return templates


def _tool_name_problem(name: str) -> str:
    if len(name) > 64:
        return f"tool name is {len(name)} characters long; the limit is 64"
    bad = sorted({c for c in name if not TOOL_NAME.match(c)})
    shown = ", ".join(repr(c) for c in bad)
    return f"tool name {name!r} may only hold letters, digits, '_', '-' and '.' (found {shown})"


def _deeper_than(value: Any, limit: int) -> JsonPath | None:
    """The path of the first value (in document order) more than ``limit`` levels down."""
    if not isinstance(value, dict | list) or not too_deep(value, limit):
        return None  # no container ``limit`` levels down: no value below it (the usual case)
    stack: list[tuple[Any, int, Any]] = [(value, 0, (None,))]
    while stack:
        node, level, trail = stack.pop()
        if level > limit:
            return schemas.located(trail)
        if isinstance(node, dict | list):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((v, level + 1, (trail, k)) for k, v in reversed(list(items)))
    return None


def check_semantics(doc: Document, broken: set[JsonPath] | None = None) -> Problems:
    checker = _Semantics(doc, broken)
    checker.check_server()
    checker.check_defs()
    checker.check_tools()
    for path, message in ref_depth.long_inheritance(checker.schemas):
        checker.error(path, message)
    templates = checker.check_resources()
    check_completions(checker, check_prompts(checker), templates)
    check_auth(checker)
    check_credentials(checker)
    check_python_names(checker)
    return checker.problems
