"""The semantic diff of two surface locks: every change, and whether it breaks clients
(the rules, with examples: ``docs/surface.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcpgen.check.schemas import escape
from mcpgen.model.compact import HINT_DEFAULTS  # MCP's defaults for tool annotations
from mcpgen.render.lock import _dict, _list, tools_list_cost

from .changes import (
    BREAKING,
    COLLECTIONS,
    COMPATIBLE,
    DOCS,
    LEVELS,
    RANK,
    WHY_HINT,
    WHY_NOT_REQUIRED,
    WHY_OPTIONAL,
    WHY_REQUIRED,
    Change,
    Json,
    _canon,
    _one_to_one,
    _presence,
    _same_json,
    _same_text,
    _show,
    _string_set,
    _values,
)
from .schema_diff import SchemaDiff

# why a change is classified as it is
WHY_ADDITION = "an addition: nothing clients use is gone"
WHY_ARGUMENT_GONE = "prompts/get refuses arguments the prompt does not declare"
WHY_CAPABILITY_FLAG = (
    "clients that rely on it (notifications, subscriptions, task requests) lose it"
)
WHY_CONTENT_HINT = "a hint about the content"
WHY_DOCS = "shown to people and models; no call changes"
WHY_HIDDEN = "clients no longer see it in the list"
WHY_META = "_meta is read only by clients that know its keys; check those that do"
WHY_NEW_ITEM = "a new item: nothing clients use is gone"
WHY_NOW_OPERATION = "tools/list does not show it; it is reachable only through the meta tools"
WHY_NOW_TOOL = (
    "call_operation and execute no longer reach it (the meta tools reach operations "
    "only); tools/list shows it, and tools/call calls it as before"
)
WHY_NO_RULE = "a field mcpgen has no rule for; review it"
WHY_OUTPUT_SCHEMA_ADDED = "results now also carry described structured content"
WHY_OUTPUT_SCHEMA_GONE = "results no longer promise structured content that clients may read"
WHY_SCOPE_ADDED = "callers whose tokens lack the new scope are refused"
WHY_SCOPE_REMOVED = "every caller allowed before still is"
WHY_SERVER_NAME = "clients address a server by their own configuration, not by serverInfo.name"


def diff(old: Mapping[str, Json], new: Mapping[str, Json]) -> list[Change]:
    """Every change from lock ``old`` to lock ``new``, sorted by level, item, path."""
    return _Differ(old, new).run()


def summary(
    changes: Sequence[Change], old: Mapping[str, Json], new: Mapping[str, Json]
) -> dict[str, int]:
    counts = {level: sum(c.level == level for c in changes) for level in LEVELS}
    (b0, t0), (b1, t1) = tools_list_cost(old), tools_list_cost(new)
    return {**counts, "tokensBefore": t0, "tokensAfter": t1, "bytesBefore": b0, "bytesAfter": b1}


class _Differ:
    def __init__(self, old: Mapping[str, Json], new: Mapping[str, Json]) -> None:
        self.old, self.new = old, new
        self.changes: dict[tuple[str, str, str, str], Change] = {}

    def add(self, level: str, item: str, path: str, change: str, why: str) -> None:
        """Record a change; the first one said at a (level, item, path, change) stands."""
        self.changes.setdefault((level, item, path, change), Change(level, item, path, change, why))

    def run(self) -> list[Change]:
        self.server()
        self.capabilities()
        for key in COLLECTIONS:
            self.collection(key)
        return sorted(
            self.changes.values(), key=lambda c: (RANK[c.level], c.item, c.path, c.change)
        )

    def server(self) -> None:
        old, new = _dict(self.old, "server"), _dict(self.new, "server")
        for key in sorted(set(old) | set(new)):
            a, b = old.get(key), new.get(key)
            if _same_text(a, b):
                continue
            shown = f"{key} {_show(a)} -> {_show(b)}"
            text = shown if key in ("name", "version") else _presence(key, a, b)
            level, why = (COMPATIBLE, WHY_SERVER_NAME) if key == "name" else (DOCS, WHY_DOCS)
            self.add(level, "server", f"/{escape(key)}", text, why)

    def capabilities(self) -> None:
        old, new = _dict(self.old, "capabilities"), _dict(self.new, "capabilities")
        for kind in sorted(set(old) | set(new)):
            item = f"capability:{kind}"
            if kind not in new:
                self.add(BREAKING, item, "", "capability removed", "clients that use it get errors")
            elif kind not in old:
                self.add(COMPATIBLE, item, "", "capability added", "nothing clients use is gone")
            else:
                a, b = _flags(old[kind]), _flags(new[kind])
                for flag in sorted(a - b):
                    text = f"{flag[1:]} no longer supported"
                    self.add(BREAKING, item, flag, text, WHY_CAPABILITY_FLAG)
                for flag in sorted(b - a):
                    self.add(COMPATIBLE, item, flag, f"{flag[1:]} now supported", WHY_ADDITION)

    def collection(self, key: str) -> None:
        id_key, kind = COLLECTIONS[key]
        by_kind = {"resource": self.resource, "template": self.resource, "prompt": self.prompt}
        compare = by_kind.get(kind, self.tool)  # tools and operations
        old = {str(e.get(id_key)): e for e in _list(self.old, key)}
        new = {str(e.get(id_key)): e for e in _list(self.new, key)}
        for name in sorted(old.keys() & new.keys()):
            if not _same_json(old[name], new[name]):
                compare(f"{kind}:{name}", old[name], new[name])
        removed = {n: old[n] for n in old.keys() - new.keys()}
        added = {n: new[n] for n in new.keys() - old.keys()}
        if kind in ("tool", "operation"):
            self._moves(kind, removed, added)
        noun, kept = _KINDS[kind][:2]
        # a rename: a removed and an added item whose signatures match one to one
        old_sigs = {n: _signature(kind, e) for n, e in removed.items()} if added else {}
        new_sigs = {n: _signature(kind, e) for n, e in added.items()} if removed else {}
        for before, after in sorted(_one_to_one(old_sigs, new_sigs)):
            text, why = f"renamed to {after}", f"no {noun} is called {before} any more; "
            why += f"{after} has the same {kept}: clients that use {before} fail"
            self.add(BREAKING, f"{kind}:{before}", "", text, why)
            compare(f"{kind}:{after}", removed.pop(before), added.pop(after))
        for name in removed:
            why = f"clients that use this {noun} get an error"
            self.add(BREAKING, f"{kind}:{name}", "", "removed", why)
        for name in added:
            tokens = _dict(new[name], "size").get("tokens") if kind == "tool" else None
            extra = f" (~{int(tokens)} tokens, estimated)" if isinstance(tokens, int) else ""
            self.add(COMPATIBLE, f"{kind}:{name}", "", f"added{extra}", WHY_NEW_ITEM)

    def _moves(self, kind: str, removed: dict[str, Json], added: dict[str, Json]) -> None:
        """A tool that became an operation or the reverse: one change under the old name and
        the entries compared under the new one, not a removal and an addition."""
        other = "operations" if kind == "tool" else "tools"
        before = {str(e.get("name")): e for e in _list(self.old, other)}
        after = {str(e.get("name")): e for e in _list(self.new, other)}
        for name in sorted(removed.keys() & (after.keys() - before.keys())):
            change, why, now = _MOVES[kind]
            self.add(BREAKING, f"{kind}:{name}", "", change, why)
            self.tool(f"{now}:{name}", removed.pop(name), after[name])
        for name in added.keys() & (before.keys() - after.keys()):
            del added[name]

    def _common(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        """title, description, icons, scopes, enabled, _meta: the same for every kind."""
        for key in ("title", "description", "icons"):
            a, b = old.get(key), new.get(key)
            if not _same_text(a, b):
                self.add(DOCS, item, f"/{key}", _presence(key, a, b), WHY_DOCS)
        a_s, b_s = _string_set(old.get("scopes")), _string_set(new.get("scopes"))
        for level, scopes, text, why in (
            (BREAKING, b_s - a_s, "scope(s) added", WHY_SCOPE_ADDED),
            (COMPATIBLE, a_s - b_s, "scope(s) no longer needed", WHY_SCOPE_REMOVED),
        ):
            if scopes:
                self.add(level, item, "/scopes", f"{text}: {_values(scopes)}", why)
        was, now = old.get("enabled", True) is not False, new.get("enabled", True) is not False
        if was and not now:
            self.add(BREAKING, item, "/enabled", "hidden (enabled: false)", WHY_HIDDEN)
        elif now and not was:
            self.add(COMPATIBLE, item, "/enabled", "listed again (enabled: true)", "an addition")
        a, b = old.get("_meta"), new.get("_meta")
        if a != b:
            self.add(COMPATIBLE, item, "/_meta", _presence("_meta", a, b), WHY_META)

    def _rest(self, item: str, old: dict[str, Json], new: dict[str, Json], known: set[str]) -> None:
        for key in sorted((set(old) | set(new)) - known - _COMMON_KEYS):
            a, b = old.get(key), new.get(key)
            if a != b:
                self.add(COMPATIBLE, item, f"/{escape(key)}", _presence(key, a, b), WHY_NO_RULE)

    def tool(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        a, b = old.get("inputSchema", {}), new.get("inputSchema", {})
        SchemaDiff(self.add, item, "/inputSchema", a, b, False).compare(a, b, "/inputSchema")
        a, b, where = old.get("outputSchema"), new.get("outputSchema"), "/outputSchema"
        if a is not None and b is not None:
            SchemaDiff(self.add, item, where, a, b, True).compare(a, b, where)
        elif a is not None:
            self.add(BREAKING, item, where, "output schema removed", WHY_OUTPUT_SCHEMA_GONE)
        elif b is not None:
            self.add(COMPATIBLE, item, where, "output schema added", WHY_OUTPUT_SCHEMA_ADDED)
        self.annotations(item, old.get("annotations"), new.get("annotations"))
        self.execution(item, old.get("execution"), new.get("execution"))
        known = {"name", "inputSchema", "outputSchema", "annotations", "execution"}
        self._rest(item, old, new, known)

    def annotations(self, item: str, old: Json, new: Json) -> None:
        """Tool hints, compared by their effective values (MCP's defaults filled in)."""
        if old == new:
            return
        a, b = _hints(old), _hints(new)
        for hint, why in _RISKS.items():
            if a[hint] == b[hint] or (hint in _WRITES and a["readOnlyHint"] != b["readOnlyHint"]):
                continue  # a tool that starts or stops writing: readOnlyHint says it all
            where = f"/annotations/{hint}"
            change = f"{hint} {str(a[hint]).lower()} -> {str(b[hint]).lower()}"
            if b[hint] != HINT_DEFAULTS[hint]:
                self.add(COMPATIBLE, item, where, change, _SAFER.get(hint, "a safer promise"))
                continue
            if hint == "readOnlyHint":
                effects = {
                    "destructive": b["destructiveHint"],
                    "not idempotent": not b["idempotentHint"],
                }
                now = " and ".join(effect for effect, on in effects.items() if on)
                change += f" (now {now})" if now else ""
            self.add(BREAKING, item, where, change, why)
        old_d = old if isinstance(old, dict) else {}
        new_d = new if isinstance(new, dict) else {}
        for key in sorted((set(old_d) | set(new_d)) - set(HINT_DEFAULTS)):
            x, y = old_d.get(key), new_d.get(key)
            if not _same_text(x, y):
                level = DOCS if key == "title" else COMPATIBLE
                self.add(level, item, f"/annotations/{escape(key)}", _presence(key, x, y), WHY_HINT)

    def execution(self, item: str, old: Json, new: Json) -> None:
        """``execution.taskSupport`` (``task:`` in the manifest, docs/tasks.md)."""
        a, b = _task_support(old), _task_support(new)
        if a == b:
            if old != new:
                self.add(COMPATIBLE, item, "/execution", _presence("execution", old, new), WHY_HINT)
            return
        refused = {"required": "plain tools/call requests", "forbidden": "task-augmented calls"}
        level, why = BREAKING, f"{refused.get(b)} are now refused"
        if b not in refused:
            level, why = COMPATIBLE, "every call that worked still does"
        self.add(level, item, "/execution/taskSupport", f"taskSupport {a} -> {b}", why)

    def resource(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        for key, level, why in (
            ("name", COMPATIBLE, "resources are read by URI; the name only labels it"),
            ("mimeType", BREAKING, "clients that parse the content by its type may fail"),
            ("contentSize", DOCS, WHY_CONTENT_HINT),
            ("annotations", DOCS, WHY_CONTENT_HINT),
        ):
            a, b = old.get(key), new.get(key)
            if a != b:
                text = _presence(key, a, b) if level == DOCS else f"{key} {_show(a)} -> {_show(b)}"
                self.add(level, item, f"/{key}", text, why)
        known = {"uri", "uriTemplate", "name", "mimeType", "contentSize", "annotations"}
        self._rest(item, old, new, known)

    def prompt(self, item: str, old: dict[str, Json], new: dict[str, Json]) -> None:
        self._common(item, old, new)
        a = {str(x.get("name")): x for x in _list(old, "arguments")}
        b = {str(x.get("name")): x for x in _list(new, "arguments")}
        for name in sorted(set(a) | set(b)):
            where = f"/arguments/{escape(name)}"
            if name not in b:
                self.add(BREAKING, item, where, f"argument {name} removed", WHY_ARGUMENT_GONE)
            elif name not in a:
                if b[name].get("required"):
                    self.add(BREAKING, item, where, f"new required argument {name}", WHY_REQUIRED)
                else:
                    self.add(COMPATIBLE, item, where, f"new optional argument {name}", WHY_OPTIONAL)
            else:
                was, now = bool(a[name].get("required")), bool(b[name].get("required"))
                if was != now:
                    level, why = (BREAKING, WHY_REQUIRED) if now else (COMPATIBLE, WHY_NOT_REQUIRED)
                    text = "became required" if now else "no longer required"
                    self.add(level, item, f"{where}/required", f"argument {name} {text}", why)
                for key in ("title", "description"):
                    x, y = a[name].get(key), b[name].get(key)
                    if not _same_text(x, y):
                        self.add(DOCS, item, f"{where}/{key}", _presence(key, x, y), WHY_DOCS)
        self._rest(item, old, new, {"name", "arguments"})


def _flags(capability: Json, path: str = "") -> set[str]:
    """The pointers of a capability's true flags and nested objects (``/requests/tools/call``)."""
    found: set[str] = set()
    for key, value in capability.items() if isinstance(capability, dict) else ():
        if value is True or isinstance(value, dict):
            found.add(where := f"{path}/{escape(key)}")
            found |= _flags(value, where)
    return found


# each hint: why turning it to MCP's default (the unsafe value: it assumes the worst) breaks clients
_RISKS = {
    "readOnlyHint": "clients that run read-only tools without asking may now change data unasked",
    "destructiveHint": "clients that allowed it as non-destructive may now lose data unasked",
    "idempotentHint": "clients that retry it after a failure may now repeat its effect",
    "openWorldHint": (
        "the tool now reaches outside systems; clients that allowed it as closed may not want that"
    ),
}
_SAFER = {"readOnlyHint": "the tool now promises to change nothing"}
_WRITES = ("destructiveHint", "idempotentHint")  # meaningful only for tools that write


def _hints(annotations: Json) -> dict[str, bool]:
    data = annotations if isinstance(annotations, dict) else {}
    hints = {k: bool(data.get(k, default)) for k, default in HINT_DEFAULTS.items()}
    if hints["readOnlyHint"]:
        hints["destructiveHint"], hints["idempotentHint"] = False, True
    return hints


def _task_support(execution: Json) -> str:
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in ("optional", "required") else "forbidden"


# a tool that became an operation, or the reverse: (change, why, the new item's kind)
_MOVES = {
    "tool": ("no longer listed (now an operation)", WHY_NOW_OPERATION, "operation"),
    "operation": ("now a listed tool (no longer an operation)", WHY_NOW_TOOL, "tool"),
}
_COMMON_KEYS = frozenset({"title", "description", "icons", "scopes", "enabled", "_meta", "size"})
# each kind: its noun, and what a renamed one keeps (in words, and the keys it is made of)
_KINDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "tool": ("tool", "input and output schemas", ("inputSchema", "outputSchema")),
    "operation": ("operation", "input and output schemas", ("inputSchema", "outputSchema")),
    "resource": ("resource", "name and mimeType", ("name", "mimeType")),
    "template": ("resource template", "name and mimeType", ("name", "mimeType")),
    "prompt": ("prompt", "arguments", ()),
}


def _signature(kind: str, entry: dict[str, Json]) -> str:
    args = sorted((str(a.get("name")), bool(a.get("required"))) for a in _list(entry, "arguments"))
    return _canon([entry.get(key) for key in _KINDS[kind][2]] or args)
