"""OpenAPI Schema Objects as JSON Schema 2020-12 (``docs/openapi.md``, "Schemas"): every
``$ref`` becomes ``#/$defs/<Name>``, converted once and bundled into each tool using it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpgen.check import schemas as json_schema
from mcpgen.check.ref_depth import Depths, long_inheritance
from mcpgen.check.schemas import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES, def_name, def_ref
from mcpgen.load import JsonPath
from mcpgen.openapi.keywords import VALUE_KEYWORDS, default_fits, finish, value_keyword
from mcpgen.openapi.naming import DefNames
from mcpgen.openapi.one_way import decide, marking_patterns, matches
from mcpgen.openapi.plans import Plans
from mcpgen.openapi.sources import Heard, Key, Sources

Json = Any
IGNORED = frozenset({"xml", "externalDocs", "$defs", "definitions"})
UNSUPPORTED = frozenset(
    {"$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
     "$vocabulary"}
)  # fmt: skip


MARKED, CONTESTED = 2, 1  # ``_marks``: a property marked, marked unless required (0: not)


class LongChain(Exception):
    """A chain of definitions too long to import (reported where it starts): the import stops."""


class SchemaConverter:
    """Converts schemas, naming and caching each referenced definition once."""

    def __init__(self, sources: Sources, version: str, reserved: Iterable[str] = ()) -> None:
        self.sources = sources
        self.components: JsonPath = (
            ("definitions",) if version == "2.0" else ("components", "schemas")
        )
        self.naming = DefNames(sources, self.components, reserved)
        self.defs: dict[str, Json] = {}
        self.deps: dict[str, frozenset[str]] = {}
        self.origin: dict[str, Key] = {}
        self._pending: list[tuple[str, Key]] = []
        self._bundles: dict[frozenset[str], dict[str, Json]] = {}
        self.plans = {keyword: Plans(self, keyword) for keyword in ("readOnly", "writeOnly")}
        self.patterns: dict[tuple[int, str], tuple[Json, list[str]]] = {}  # marking_patterns
        self._marked: dict[str, dict[int, tuple[Json, bool]]] = {"readOnly": {}, "writeOnly": {}}
        self._marks_of: dict[str, dict[int, tuple[Json, dict[str, int]]]] = {}  # (_marks)
        self._depths: Depths = {}  # (long_inheritance, in convert)
        self.xml: dict[int, tuple[Json, Json]] = {}  # id -> a converted schema, its ``xml``
        self.met: set[str] | None = None  # the definitions asked for (``kept``)
        self.heard: dict[str, list[Heard]] = {}  # what each one's conversion reported (kept)

    def def_name(self, key: Key) -> str:
        """The ``$defs`` name of the schema at ``key``; converted later if it is new."""
        name = self.naming.name_of(key)
        if self.met is not None:
            self.met.add(name)
        if name not in self.defs and name not in self.origin:
            self.origin[name] = key
            self._pending.append((name, key))
        return name

    def convert(self, src: int, path: JsonPath, node: Json) -> tuple[Json, set[str]]:
        """A schema found inline at ``path``, and the definitions it refers to directly."""
        deps: set[str] = set()
        result, done = self._schema(src, path, node, deps), list[str]()
        while self._pending:  # the definitions met, each converted once
            name, key = self._pending.pop()
            found: set[str] = set()
            heard = self.sources.heard  # (kept by definition, not by the operation met first)
            if heard is not None:
                self.sources.heard = self.heard.setdefault(name, [])
            try:
                self.defs[name] = self._schema(key[0], key[1], self.sources.value(key), found)
            finally:
                self.sources.heard = heard
            self.deps[name], done = frozenset(found), [*done, name]
        if done:  # a long allOf chain refused before its marks are asked (they grow with n²)
            roots = [((name,), self.defs[name], self._target) for name in done]
            for where, message in long_inheritance(roots, self._depths, inside=False):
                self.sources.error(*self.origin[str(where[0])], message)
                raise LongChain
        return result, deps

    def _target(self, ref: str) -> Json:
        return self.defs.get(def_name(ref) or "")

    def add_defs(self, schema: dict[str, Json], roots: Iterable[str]) -> None:
        """Give ``schema`` the definitions ``roots`` need, transitively, as ``$defs``."""
        needed = json_schema.closure(roots, self.deps)  # (each definition has its deps)
        if needed:
            bundle = {name: self.defs[name] for name in sorted(needed)}
            schema["$defs"] = self._bundles.setdefault(frozenset(needed), bundle)

    def resolve(self, schema: Json) -> tuple[Json, str | None]:
        """Follow a schema that is only a reference; (target, its definition name)."""
        name = None
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            if set(schema) - {"$ref", "description", "title"}:
                break
            target = def_name(schema["$ref"])
            if target is None or target not in self.defs:
                break
            name = target
            if name in seen:  # (every definition has an origin)
                self.sources.error(*self.origin[name], "schema reference cycle: refers to itself")
                return {}, None
            seen.add(name)
            schema = self.defs[name]
        return schema, name

    def is_object(self, schema: Json, depth: int = 0) -> bool:
        """Whether every instance ``schema`` accepts is an object (so it can be an output)."""
        schema, _ = self.resolve(schema)
        if not isinstance(schema, dict) or depth > 16:
            return False
        kind = schema.get("type")
        if kind is not None:
            return bool(kind == "object" or kind == ["object"])
        if any(self.is_object(s, depth + 1) for s in schema.get("allOf", [])):
            return True
        for key in ("oneOf", "anyOf"):
            if key in schema:  # (a converted schema's: a list of them, not empty)
                return all(self.is_object(s, depth + 1) for s in schema[key])
        return "properties" in schema or "additionalProperties" in schema

    def read_only(self, schema: Json, keyword: str) -> list[str]:
        """The properties of ``schema`` marked ``keyword`` where they apply to the value."""
        return sorted(prop for prop, mark in self._marks(schema, keyword).items() if mark)

    def _marks(self, schema: Json, keyword: str) -> dict[str, int]:
        """Each property ``schema`` declares: ``MARKED`` ``keyword``, ``CONTESTED``
        (``readOnly`` only: a ``oneOf``/``anyOf`` member marks it, another declares it
        unmarked and does not require it: marked unless what holds the members requires it,
        decided where that is known), or 0; each schema once (the rule: docs/openapi.md,
        note ¹)."""
        target, _ = self.resolve(schema)
        if not isinstance(target, dict):
            return {}
        memo = self._marks_of.setdefault(keyword, {})  # id -> the schema (kept alive), its marks
        one_branch = keyword == "readOnly"  # (writeOnly: any member marking it counts)
        if id(target) not in memo:  # (set before the members: a cycle ends)
            memo[id(target)] = target, (marks := {})
            for prop, sub in target.get("properties", {}).items():
                marks[prop] = MARKED * self.marked_read_only(sub, keyword)
            for members in self._groups(target):
                group: dict[str, int] = {}
                needed, unmarked = set[str](), set[str]()  # (readOnly) declared unmarked
                for member in members:  # any member marking a property marks it
                    own = self._marks(member, keyword)
                    group.update({prop: max(group.get(prop, 0), own[prop]) for prop in own})
                    if one_branch and (mine := {p for p, mark in own.items() if not mark}):
                        unmarked |= mine  # (its values send what it requires)
                        needed |= mine & self.required(member)
                group = {
                    p: 0 if p in needed else min(mark, CONTESTED) if p in unmarked else mark
                    for p, mark in group.items()
                }
                marks.update({prop: max(marks.get(prop, 0), group[prop]) for prop in group})
            for pattern in marking_patterns(self, target, keyword):  # wherever declared
                marks.update({prop: MARKED for prop in marks if matches(pattern, prop)})
            if one_branch and CONTESTED in marks.values():  # what holds the members requires
                asked = self.required(target)
                marks.update(
                    {p: 0 for p, mark in marks.items() if mark == CONTESTED and p in asked}
                )
        return memo[id(target)][1]

    def marked_read_only(self, schema: Json, keyword: str = "readOnly") -> bool:
        """Whether ``schema`` says ``keyword``: itself, or one of its ``_groups`` wholly."""
        if isinstance(schema, dict) and id(schema) not in self._marked[keyword]:
            decide(schema, self._groups, self._marked[keyword], keyword)
        return isinstance(schema, dict) and self._marked[keyword][id(schema)][1]

    def _groups(self, schema: dict[str, Json]) -> list[list[Json]]:
        """What applies beside ``schema``'s keywords, in groups of which one member applies:
        each ``allOf`` member and the definition alone, ``oneOf``/``anyOf`` members together."""
        together = [schema[k] for k in ("oneOf", "anyOf") if isinstance(schema.get(k), list)]
        groups = [[m for m in members if m != {"type": "null"}] for members in together]
        return [[m] for m in self.always(schema)] + [members for members in groups if members]

    def always(self, schema: dict[str, Json]) -> list[Json]:
        """What always applies beside ``schema``: its ``allOf`` members and its definition."""
        ref = def_name(schema.get("$ref"))
        return [*(schema.get("allOf") or ()), *([self.defs[ref]] if ref in self.defs else [])]

    def applying(self, schema: Json) -> list[dict[str, Json]]:
        """``schema`` and what always applies beside it, at any depth (``allOf`` members,
        definitions referred to), each once (a reference cycle ends), ``schema`` first."""
        nodes, todo = list[dict[str, Json]](), [schema]
        while todo:
            node = todo.pop()
            if isinstance(node, dict) and all(node is not n for n in nodes):
                nodes.append(node)
                todo += reversed(self.always(node))
        return nodes

    def required(self, schema: Json) -> set[str]:
        """The properties a value of ``schema`` must have: wherever ``applying`` says."""
        return {p for node in self.applying(schema) for p in node.get("required", ())}

    def xml_names(self, schema: Json, items: bool = True) -> list[str]:
        """The names other than its property's an XML element of ``schema`` may have: its
        ``xml.name`` (its own, else that of what always applies beside it, at any depth), its
        items' when an array is not ``wrapped``."""
        nodes = self.applying(schema)
        xml = self.xml_of(nodes)
        names = [xml.get("name")]
        if items and xml.get("wrapped") is not True:
            names += [n for node in nodes for n in self.xml_names(node.get("items"), False)]
        return [name for name in names if isinstance(name, str)]

    def xml_of(self, nodes: list[dict[str, Json]]) -> dict[str, Json]:
        """The ``xml`` of the schema ``applying`` gave ``nodes``: each key its own (it wins),
        else that of what always applies beside it."""
        found = [(self.xml.get(id(node)) or (0, {}))[1] for node in reversed(nodes)]
        return {key: value for xml in found for key, value in xml.items()}  # (its own last)

    def _schema(self, src: int, path: JsonPath, node: Json, deps: set[str]) -> Json:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            self.sources.warn(src, path, "a schema must be an object; treated as any value")
            return {}
        out: dict[str, Json] = {}
        if "$ref" in node:
            key = self.sources.parse_ref(src, (*path, "$ref"), node["$ref"])
            if key is not None:
                name = self.def_name(key)
                deps.add(name)
                out["$ref"] = def_ref(name)
        for keyword, value in node.items():
            where = (*path, keyword)
            if keyword in ("$ref", *IGNORED) or not isinstance(keyword, str) or keyword[:2] == "x-":
                continue
            if keyword == "items" and isinstance(value, list):  # the draft-4 tuple form
                out["prefixItems"] = self._each(src, where, value, deps)
            elif keyword in SCHEMA_VALUES:
                out[keyword] = self._schema(src, where, value, deps)
            elif keyword == "additionalItems":
                if isinstance(node.get("items"), list):
                    out["items"] = self._schema(src, where, value, deps)
            elif keyword in SCHEMA_MAPS:
                if isinstance(value, dict):
                    out[keyword] = self._each(src, where, value, deps)
                else:
                    self._drop(src, where, "must be a mapping of schemas")
            elif keyword in SCHEMA_LISTS:
                if isinstance(value, list) and (value or keyword == "prefixItems"):
                    out[keyword] = self._each(src, where, value, deps)
                else:
                    self._drop(src, where, "must be a non-empty list of schemas")
            elif keyword in VALUE_KEYWORDS:
                why = value_keyword(keyword, value, node, out)
                if why:
                    self._drop(src, where, why)
            elif keyword == "dependencies":
                self._dependencies(src, where, value, out, deps)
            elif keyword == "discriminator":
                self._discriminator(src, where, node, out, deps)
            elif keyword in UNSUPPORTED:
                self._drop(src, where, "is not supported (references are resolved by mcpgen)")
            else:
                self._drop(src, where, "is not a JSON Schema 2020-12 keyword")
        picked: dict[str, Json] = out.get("discriminator") or {}
        for keyword in ("oneOf", "anyOf") if picked.get("mapping") else ():
            if isinstance(out.get(keyword), list):
                tags, name = picked["mapping"], picked["propertyName"]
                out[keyword] = [tagged(branch, name, tags) for branch in out[keyword]]
        result = finish(out, node.get("x-nullable") is True)  # Swagger 2.0's extension
        if isinstance(node.get("xml"), dict):  # (``xml_names``)
            self.xml[id(result)] = result, node["xml"]
        if "default" in result and not default_fits(result):
            del result["default"]  # the model would not type-check (list[int] = ["x"])
            self._drop(src, (*path, "default"), "does not match its schema")
        return result

    def _each(self, src: int, where: JsonPath, value: Json, deps: set[str]) -> Json:
        if isinstance(value, dict):
            return {k: self._schema(src, (*where, k), v, deps) for k, v in value.items()}
        return [self._schema(src, (*where, i), v, deps) for i, v in enumerate(value)]

    def _drop(self, src: int, where: JsonPath, why: str) -> None:
        self.sources.warn(src, where, f"schema keyword {where[-1]!r} {why}; left out")

    def _dependencies(
        self, src: int, where: JsonPath, value: Json, out: dict[str, Json], deps: set[str]
    ) -> None:
        if not isinstance(value, dict):
            self._drop(src, where, "must be a mapping")
            return
        for name, item in value.items():
            if isinstance(item, list) and all(isinstance(v, str) for v in item):
                out.setdefault("dependentRequired", {})[name] = item
            else:
                schema = self._schema(src, (*where, name), item, deps)
                out.setdefault("dependentSchemas", {})[name] = schema

    def _discriminator(
        self, src: int, where: JsonPath, node: dict[str, Json], out: dict[str, Json], deps: set[str]
    ) -> None:
        value = node["discriminator"]
        if isinstance(value, str):  # Swagger 2.0: the property name
            value = {"propertyName": value}
        if not isinstance(value, dict) or not isinstance(value.get("propertyName"), str):
            self._drop(src, where, "needs a string 'propertyName'")
            return
        mapping: dict[str, str] = {}
        given = value.get("mapping", {})
        if not isinstance(given, dict):
            self.sources.warn(src, (*where, "mapping"), "discriminator mapping must be a mapping")
            given = {}
        for tag, target in given.items():
            at = (*where, "mapping", tag)
            if not isinstance(target, str):
                self.sources.warn(src, at, "discriminator mapping values must be strings")
                continue
            if "#" in target or "/" in target or target.endswith((".json", ".yaml", ".yml")):
                key = self.sources.parse_ref(src, at, target)
            else:  # a bare schema name
                key = (src, (*self.components, target))
                try:
                    self.sources.value(key)
                except (KeyError, TypeError, IndexError):
                    self.sources.error(src, at, f"no schema named {target!r}")
                    key = None
            if key is not None:
                name = self.def_name(key)
                deps.add(name)
                mapping[tag] = def_ref(name)
        mapped = set(mapping.values())
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword)
            for index, branch in enumerate(branches if isinstance(branches, list) else []):
                if not (isinstance(branch, dict) and isinstance(branch.get("$ref"), str)):
                    continue
                key = self.sources.parse_ref(src, (*where[:-1], keyword, index), branch["$ref"])
                if key is None or not key[1]:
                    continue
                name = self.def_name(key)
                if def_ref(name) not in mapped:
                    mapping.setdefault(str(key[1][-1]), def_ref(name))
        out["discriminator"] = {"propertyName": value["propertyName"]} | (
            {"mapping": mapping} if mapping else {}
        )


def tagged(branch: Json, name: str, mapping: dict[str, str]) -> Json:
    """A reference branch, with the discriminator values picking it required of ``name``."""
    if not isinstance(branch, dict) or set(branch) != {"$ref"}:
        return branch
    tags = [tag for tag, ref in mapping.items() if ref == branch["$ref"]]
    return {**branch, "properties": {name: {"enum": tags}}, "required": [name]} if tags else branch
