"""Where a value has properties marked ``readOnly`` (a request leaves them out) or
``writeOnly`` (an answer does), at any depth: the runtime's ``wire_body`` plans."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpgen.check import schemas as json_schema
from mcpgen.check.schemas import def_name
from mcpgen.openapi.one_way import beside, schema_objects

if TYPE_CHECKING:
    from mcpgen.openapi.schema import SchemaConverter

Json = Any


class Plans:
    """The plans of one ``keyword``, each definition's planned once for every schema."""

    def __init__(self, converter: SchemaConverter, keyword: str) -> None:
        self.converter, self.keyword = converter, keyword
        self._plans: dict[str, dict[str, Json]] = {}  # each definition's ``plan``
        self._refs: dict[str, set[str]] = {}  # the definitions each of those refers to
        self._unplanned: list[str] = []
        self._live: set[str] = set()  # the definitions whose plan drops something
        self._clean: set[str] = set()  # definitions reaching none that says ``keyword``
        self._kept: dict[str, dict[str, Json]] = {}  # the plans of those in ``$defs``, pruned
        self._named: dict[int, tuple[Json, dict[str, set[str]]]] = {}  # (``_xml_names``)

    def plan(self, schema: Json, own: bool = True) -> dict[str, Json]:
        """Where a value of ``schema`` has properties marked ``keyword``: ``drop`` the
        object's own (unless not ``own``: a spread body's), ``properties``, ``patterns``,
        ``additional`` (beside ``known``), ``prefix``, ``items``: its parts' plans (``gone``:
        marked), ``all``: its members', ``ref``: a definition's plan in ``$defs``; for XML:
        ``xml`` (the names of ``drop``'s elements), ``names`` (a property's element's other
        names), ``wrapped`` (an array whose items are its element's children)."""
        if not self._reaches(schema):
            return {}
        root_refs: set[str] = set()
        root = self._plan(schema if own else self.converter.resolve(schema)[0], root_refs, schema)
        new: set[str] = set()
        while self._unplanned:
            new.add(name := self._unplanned.pop())
            self._plans[name] = self._plan(
                self.converter.defs[name], self._refs.setdefault(name, set())
            )
        live = self._live  # (final once planned: the definitions it refers to are planned too)

        def pruned(node: dict[str, Json]) -> dict[str, Json]:
            if "ref" in node or "gone" in node:
                return node if "gone" in node or node["ref"] in live else {}
            parts = {k: p for k, v in node.get("properties", {}).items() if (p := pruned(v))}
            kept = {"drop": node.get("drop"), "xml": node.get("xml"), "properties": parts}
            kept["items"] = pruned(node["items"]) if "items" in node else None
            prefix = [pruned(p) for p in node.get("prefix", ())]
            kept["prefix"] = prefix if any(prefix) or kept["items"] else None
            more = pruned(node["additional"]) if "additional" in node else None
            patterns = {k: pruned(v) for k, v in node.get("patterns", {}).items()}
            kept["patterns"] = patterns if more else {k: p for k, p in patterns.items() if p}
            kept["additional"], kept["known"] = (more, node["known"]) if more else (None, None)
            kept["all"] = [p for p in map(pruned, node.get("all", ())) if p]
            named = node.get("names", {}).items()  # (a member's properties' too: all of them)
            kept["names"] = {k: v for k, v in named if k in parts or kept["all"]}
            array = kept["items"] or kept["prefix"] or kept["all"]  # (a member's items too)
            kept["wrapped"] = node.get("wrapped") if array else None
            return {k: v for k, v in kept.items() if v}

        # a definition drops something at any depth, or leads to one that does
        while grown := {n for n in new - live if pruned(self._plans[n])}:
            live |= grown
        found = pruned({k: v for k, v in root.items() if own or k != "drop"})
        # (a definition not live refers to none that is: it would be live)
        needed = json_schema.closure(root_refs & live, self._refs) & live
        for name in needed - self._kept.keys():  # (final: what it refers to is planned)
            self._kept[name] = pruned(self._plans[name])
        if needed:
            found["$defs"] = {name: self._kept[name] for name in sorted(needed)}
        return found

    def _reaches(self, schema: Json) -> bool:
        """Whether ``schema``, or a definition it refers to at any depth, says ``keyword``."""
        todo, seen = [schema], set()
        for node in schema_objects(todo):
            if node.get(self.keyword) is True:
                return True
            ref = def_name(node["$ref"]) if "$ref" in node else None  # (most have none)
            if ref in self.converter.defs and ref not in seen and ref not in self._clean:
                seen.add(ref)
                todo.append(self.converter.defs[ref])
        self._clean |= seen
        return False

    def _plan(self, schema: Json, refs: set[str], value: Json = None) -> dict[str, Json]:
        """``schema``'s plan; the definitions it refers to are added to ``refs``. ``value``:
        the schema of a value (not a member's, a definition's), whose XML element is
        ``wrapped`` when its ``xml`` says so, read through what applies beside it (a
        definition, an ``allOf`` member), as ``xml_names`` reads a name."""
        target, name = self.converter.resolve(schema)
        read = bool(self.converter.xml) and value is not None  # (no ``xml`` in the document)
        facts = self.converter.xml_of(self.converter.applying(value)) if read else {}
        wrapped = {"wrapped": True} if facts.get("wrapped") is True else {}
        if name is not None:
            if name not in self._plans and name not in self._unplanned:
                self._unplanned.append(name)
            refs.add(name)
            return {"ref": name, **wrapped}
        if not isinstance(target, dict):
            return {}
        drop = self.converter.read_only(target, self.keyword)
        properties: dict[str, Json] = target.get("properties", {})
        plan: dict[str, Json] = {"drop": drop} if drop else {}
        named = self._xml_names(target) if self.converter.xml else {}
        xml = {n for p in drop for n in named.get(p, ())} - set(drop)
        plan.update({"xml": sorted(xml)} if xml else {})
        plan["properties"] = {
            prop: self._plan(sub, refs, sub) for prop, sub in properties.items() if prop not in drop
        }
        if named:  # (a map's element: ``wire_xml``; a member's property named here too)
            plan["names"] = {p: sorted(names) for p, names in named.items()}
        if isinstance(target.get("items"), dict):
            plan["items"] = self._value_plan(target["items"], refs)
        plan["prefix"] = [self._value_plan(i, refs, False) for i in target.get("prefixItems") or ()]
        plan.update(wrapped)  # (its items', its members' items: their elements' element)
        plan["patterns"] = {
            pattern: self._value_plan(sub, refs)
            for pattern, sub in target.get("patternProperties", {}).items()
        }
        if isinstance(target.get("additionalProperties"), dict):
            plan["additional"] = self._value_plan(target["additionalProperties"], refs)
            plan["known"] = list(properties)
        plan["all"] = [self._plan(member, refs) for member in beside(target)]
        return plan

    def _xml_names(self, target: dict[str, Json]) -> dict[str, set[str]]:
        """The names other than its own an XML element of each property of ``target`` may
        have (its ``xml.name``, its unwrapped items'): wherever the property is declared,
        ``target`` and what applies beside it, at any depth (a reference's ``xml.name`` beside
        the definition declaring it, in another ``allOf`` member)."""
        if id(target) in self._named:
            return self._named[id(target)][1]
        names: dict[str, set[str]] = {}
        self._named[id(target)] = target, names  # (kept with it: its id stays its own)
        todo, seen = [target], set[int]()
        while todo:
            node = self.converter.resolve(todo.pop())[0]
            if isinstance(node, dict) and id(node) not in seen:
                seen.add(id(node))
                for prop, sub in node.get("properties", {}).items():
                    if called := self.converter.xml_names(sub):
                        names.setdefault(prop, set()).update(called)
                todo += beside(node)
        return names

    def _value_plan(self, schema: Json, refs: set[str], gone: bool = True) -> dict[str, Json]:
        """The plan of a map's values or an array's ``items``: ``gone`` when their schema
        says ``keyword`` (each such key or item is left out; not a ``prefixItems`` item's)."""
        marked = gone and self.converter.marked_read_only(schema, self.keyword)
        return {"gone": True} if marked else self._plan(schema, refs, schema)
