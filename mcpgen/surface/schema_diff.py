"""Two schemas of one item compared by what they accept (see the module :mod:`.diff`)."""

from __future__ import annotations

from mcpgen.check.schemas import escape
from mcpgen.render.lock import _dict

from .changes import (
    BREAKING,
    COMPATIBLE,
    WHY_NOT_REQUIRED,
    WHY_OPTIONAL,
    WHY_REQUIRED,
    Json,
    _one_to_one,
    _presence,
    _same_json,
    _same_text,
    _show,
    _string_set,
)
from .schema_base import SchemaBase
from .schema_rules import (
    DEFINITIONS,
    DOC_KEYWORDS,
    HANDLED,
    MAX_DEPTH,
    OPAQUE,
    _alternatives,
    _collapse_enums,
    _extra,
    _is_false,
    _merge_into,
    _ref,
    _schema,
    _tuple,
    _type_key,
    _types,
    _validation_part,
    _without,
)

# why a change is classified as it is
WHY_CLOSED_REMOVED = "extra properties are refused, so calls that send it fail"
WHY_DEFAULT = "calls that leave this value out now get a different default"
WHY_EXTRA_ALLOWED = (
    "extra properties are allowed, so calls that send it are still accepted "
    "(the server no longer declares it)"
)
WHY_MAYBE_ABSENT = "results may leave it out: clients that read it may break"
WHY_NOT_VALIDATION = "not a JSON Schema validation keyword: validation is unchanged"
WHY_NOW_EXTRA = "calls that send it are checked against additionalProperties"
WHY_NOW_PRESENT = "results still have everything clients read"
WHY_OUTPUT_GONE = "clients that read it no longer get it"
WHY_UNKNOWN_FIELDS = "clients ignore output properties they do not know"


class SchemaDiff(SchemaBase):
    def compare(self, old: Json, new: Json, path: str, depth: int = 0) -> None:
        if _same_json(old, new) and not self._stale(old):
            return
        if depth > MAX_DEPTH:
            self.unknown(path, "schema nested too deeply to compare")
            return
        old, new = _schema(old), _schema(new)
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                self.unknown(path, "schema changed")
            return
        if _is_false(new) and not _is_false(old):
            self.narrowed(path, "no value is accepted any more (schema false)")
            return
        if _is_false(old) and not _is_false(new):
            self.widened(path, "values are accepted now (was schema false)")
            return
        old_ref, new_ref = _ref(old), _ref(new)
        if old_ref is not None or new_ref is not None:
            key = (old_ref or id(old), new_ref or id(new))
            if old_ref == new_ref and isinstance(old_ref, str) and old_ref.startswith("#"):
                # the same definition: compare it once, where it is written
                if key not in self.seen:
                    self.seen.add(key)
                    a, b = self._resolve(old_ref, True), self._resolve(new_ref, False)
                    if (a is None) != (b is None):
                        text = f"$ref {_show(old_ref)} no longer resolves the same way"
                        self.unknown(path + "/$ref", text)
                    elif a is not None:
                        self.compare(a, b, self.root_path + old_ref[1:], depth + 1)
                self._keywords(_without(old, "$ref"), _without(new, "$ref"), path, depth)
                return
            if key in self.active:  # a recursive schema met again inside itself
                return
            self.active.add(key)
            try:
                a = self._deref(old, True) if old_ref is not None else old
                b = self._deref(new, False) if new_ref is not None else new
                if (a is old and old_ref is not None) or (b is new and new_ref is not None):
                    # a reference that does not resolve here (remote, or broken)
                    if old_ref != new_ref:
                        text = f"$ref changed from {_show(old_ref)} to {_show(new_ref)}"
                        self.unknown(path + "/$ref", text)
                    a, b = _without(a, "$ref"), _without(b, "$ref")
                self.alive += [a, b]
                self.compare(a, b, path, depth + 1)
            finally:
                self.active.discard(key)
            return
        old_all, new_all = old.get("allOf"), new.get("allOf")
        if (old_all is None) != (new_all is None) or (
            isinstance(old_all, list) and isinstance(new_all, list) and len(old_all) != len(new_all)
        ):  # composed on one side only: compare what the parts add up to
            old, new = self._flatten(old, True, depth), self._flatten(new, False, depth)
            self.alive += [old, new]
        self._keywords(old, new, path, depth)

    def _flatten(self, node: dict[str, Json], old: bool, depth: int) -> dict[str, Json]:
        """``{allOf: [A, B]}`` as one schema with the keywords of A and B when that means
        the same (no clash, no additionalProperties beside other parts), else ``node``."""
        parts = node.get("allOf")
        if not isinstance(parts, list) or depth > MAX_DEPTH:
            return node
        pieces: list[dict[str, Json]] = [_without(node, "allOf")]
        for part in parts:
            part = _schema(part)
            for _ in range(16):  # follow a chain of references (one that does not resolve stays)
                if isinstance(part, dict) and "$ref" in part:
                    part = self._deref(part, old)
            if not isinstance(part, dict) or "$ref" in part:
                return node
            pieces.append(self._flatten(part, old, depth + 1))
        if any({"unevaluatedProperties", "unevaluatedItems"} & set(p) for p in pieces):
            return node
        objects = sum(
            bool({"properties", "patternProperties", "additionalProperties"} & set(p))
            for p in pieces
        )
        closed = any(_extra(p.get("additionalProperties")) != {} for p in pieces)
        merged: dict[str, Json] = {}
        if (closed and objects > 1) or not all(_merge_into(merged, p) for p in pieces):
            return node
        return merged

    def _keywords(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        old, new = _collapse_enums(old), _collapse_enums(new)
        old, new = self._lift_alternatives(old, new)
        self._type(old, new, path)
        self._enum(old, new, path)
        self._bounds(old, new, path)
        self._strings(old, new, path)
        self._object(old, new, path, depth)
        self._array(old, new, path, depth)
        for keyword in ("allOf", "anyOf", "oneOf"):
            self._applicator(keyword, old, new, path, depth)
        for key in sorted((set(old) | set(new)) - HANDLED - DEFINITIONS):
            a, b = old.get(key), new.get(key)
            if _same_text(a, b):
                continue
            where = f"{path}/{escape(key)}"
            if key in DOC_KEYWORDS or key.startswith("x-"):
                self.docs(where, _presence(key, a, b))
            elif key in OPAQUE:
                self.unknown(where, _presence(key, a, b))
            else:
                self.say(COMPATIBLE, where, _presence(key, a, b), WHY_NOT_VALIDATION)
        a, b = old.get("default"), new.get("default")
        if not (a == b and type(a) is type(b)):
            where, text = f"{path}/default", _presence("default", a, b)
            if self.output:
                self.docs(where, text)
            else:
                self.say(COMPATIBLE, where, text, WHY_DEFAULT)

    def _lift_alternatives(
        self, old: dict[str, Json], new: dict[str, Json]
    ) -> tuple[dict[str, Json], dict[str, Json]]:
        """``X`` against ``{anyOf: [X, Y]}``: compare X as the one alternative it is."""
        for keyword in ("anyOf", "oneOf"):
            for a, b, flip in ((old, new, False), (new, old, True)):
                if keyword in b and not {"anyOf", "oneOf", "allOf", "$ref"} & set(a):
                    rest_a = _validation_part(a)
                    if set(_validation_part(b)) == {keyword} and rest_a:
                        lifted = {k: v for k, v in a.items() if k not in rest_a}
                        lifted[keyword] = _alternatives(rest_a)
                        return (b, lifted) if flip else (lifted, b)
        return old, new

    def _disjoint(self, some: list[Json], others: list[Json], old: bool) -> bool:
        """No value can match one of ``some`` and one of ``others``, as their types tell."""
        kinds = []
        for group in (some, others):
            found: set[str] = set()
            for alt in group:
                alt = self._deref(alt, old) if isinstance(alt, dict) and "$ref" in alt else alt
                types = _types(alt) if isinstance(alt, dict) else None
                if types is None:
                    return False
                found |= {"number" if t == "integer" else t for t in types}
            kinds.append(found)
        return kinds[0].isdisjoint(kinds[1])

    def _object(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        if not {"properties", "required", "additionalProperties"} & (old.keys() | new.keys()):
            return
        old_props, new_props = _dict(old, "properties"), _dict(new, "properties")
        old_req, new_req = _string_set(old.get("required")), _string_set(new.get("required"))
        old_extra = _extra(old.get("additionalProperties"))
        new_extra = _extra(new.get("additionalProperties"))
        for name in sorted(set(old_props) | set(new_props) | old_req | new_req):
            where = f"{path}/properties/{escape(name)}"
            in_old, in_new = name in old_props, name in new_props
            if in_old and in_new:
                self.compare(old_props[name], new_props[name], where, depth + 1)
                self._required(name, name in old_req, name in new_req, where)
            elif in_old:
                self._property_removed(name, old_props[name], new_extra, where, depth)
            elif not in_new:  # required without a schema of its own
                self._required(name, name in old_req, name in new_req, where)
            elif self.output:
                self.say(COMPATIBLE, where, f"new property {name}", WHY_UNKNOWN_FIELDS)
            elif name in new_req:
                self.say(BREAKING, where, f"new required property {name}", WHY_REQUIRED)
            else:
                self.say(COMPATIBLE, where, f"new optional property {name}", WHY_OPTIONAL)
        self._additional(old_extra, new_extra, f"{path}/additionalProperties", depth)

    def _required(self, name: str, was: bool, now: bool, where: str) -> None:
        if was == now:
            return
        if now and not self.output:
            self.say(BREAKING, where, f"{name} became required", WHY_REQUIRED)
        elif now:
            self.say(COMPATIBLE, where, f"{name} is now always present", WHY_NOW_PRESENT)
        elif self.output:
            self.say(BREAKING, where, f"{name} no longer required", WHY_MAYBE_ABSENT)
        else:
            self.say(COMPATIBLE, where, f"{name} no longer required", WHY_NOT_REQUIRED)

    def _property_removed(
        self, name: str, schema: Json, extra: Json, where: str, depth: int
    ) -> None:
        text = f"property {name} removed"
        if self.output:
            self.say(BREAKING, where, text, WHY_OUTPUT_GONE)
        elif _is_false(extra):
            self.say(BREAKING, where, text, WHY_CLOSED_REMOVED)
        elif extra == {}:
            self.say(COMPATIBLE, where, text, WHY_EXTRA_ALLOWED)
        else:  # its values now have to match additionalProperties
            self.compare(schema, extra, where, depth + 1)
            self.say(COMPATIBLE, where, f"{text} (now an extra property)", WHY_NOW_EXTRA)

    def _additional(self, old: Json, new: Json, where: str, depth: int) -> None:
        if old == new:
            self.compare(old, new, where, depth + 1)
            return
        closed_old, closed_new = _is_false(old), _is_false(new)
        if self.output and (old == {} or new == {} or closed_old or closed_new):
            text = "extra properties " + (
                "allowed" if new == {} else "refused" if closed_new else "constrained"
            )
            self.say(COMPATIBLE, where, text, WHY_UNKNOWN_FIELDS)
        elif closed_new:
            self.narrowed(where, "additionalProperties closed (extra properties refused)")
        elif closed_old:
            self.widened(where, "additionalProperties opened (extra properties allowed)")
        elif old == {}:
            self.narrowed(where, "extra properties must now match a schema")
        elif new == {}:
            self.widened(where, "extra properties no longer need to match a schema")
        else:
            self.compare(old, new, where, depth + 1)

    def _array(self, old: dict[str, Json], new: dict[str, Json], path: str, depth: int) -> None:
        if not {"items", "prefixItems", "additionalItems"} & (old.keys() | new.keys()):
            return
        old_prefix, old_rest = _tuple(old)
        new_prefix, new_rest = _tuple(new)
        for index in range(max(len(old_prefix), len(new_prefix))):
            a = old_prefix[index] if index < len(old_prefix) else old_rest
            b = new_prefix[index] if index < len(new_prefix) else new_rest
            self.compare(a, b, f"{path}/prefixItems/{index}", depth + 1)
        self.compare(old_rest, new_rest, f"{path}/items", depth + 1)

    def _applicator(
        self, keyword: str, old: dict[str, Json], new: dict[str, Json], path: str, depth: int
    ) -> None:
        a, b = old.get(keyword), new.get(keyword)
        if _same_json(a, b) and not self._stale(a):
            return
        where = f"{path}/{keyword}"
        if not all(x is None or isinstance(x, list) for x in (a, b)):
            self.unknown(where, f"{keyword} changed")
            return
        old_list, new_list = list(a or []), list(b or [])
        unmatched_new = list(range(len(new_list)))
        unmatched_old: list[int] = []
        for i, alt in enumerate(old_list):
            for j in unmatched_new:
                if _same_json(alt, new_list[j]):
                    unmatched_new.remove(j)
                    self.compare(alt, new_list[j], f"{where}/{j}", depth + 1)
                    break
            else:
                unmatched_old.append(i)
        # pair what is left: one each, or by the same type where that is unique
        if len(unmatched_old) == 1 and len(unmatched_new) == 1:
            pairs = [(unmatched_old[0], unmatched_new[0])]
        else:
            old_types = {i: _type_key(old_list[i]) for i in unmatched_old}
            pairs = _one_to_one(old_types, {j: _type_key(new_list[j]) for j in unmatched_new})
        for i, j in pairs:
            unmatched_old.remove(i)
            unmatched_new.remove(j)
            self.compare(old_list[i], new_list[j], f"{where}/{j}", depth + 1)
        if not unmatched_old and not unmatched_new:
            return
        # for allOf every element is one more constraint; for anyOf/oneOf one more choice
        more_choice = keyword != "allOf"
        if a is None or b is None:
            text = f"{keyword} {'added' if a is None else 'removed'}"
            (self.narrowed if a is None else self.widened)(where, text)
        elif not unmatched_old or not unmatched_new:  # only added, or only removed
            added, side = bool(unmatched_new), new_list if unmatched_new else old_list
            changed = unmatched_new or unmatched_old
            text = f"{keyword}: {len(changed)} alternative(s) {'added' if added else 'removed'}"
            kept = [x for i, x in enumerate(side) if i not in changed]
            # oneOf: an overlapping alternative added to an input, or removed from an output
            overlap = keyword == "oneOf" and self.output != added
            if overlap and not self._disjoint([side[i] for i in changed], kept, not added):
                how = "matching two is refused" if added else "that matched two is valid now"
                self.unknown(where, f"{text} (oneOf: a value {how})")
            else:
                (self.widened if more_choice == added else self.narrowed)(where, text)
        else:
            n_old, n_new = len(unmatched_old), len(unmatched_new)
            self.unknown(where, f"{keyword}: {n_old} alternative(s) replaced by {n_new}")
