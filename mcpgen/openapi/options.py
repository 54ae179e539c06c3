"""The manifest's ``openapi:`` options: which operations become what, and per-tool overrides.

A rule (``include``, ``exclude`` and ``rules`` entries) matches an operation when every
criterion it gives matches: ``methods`` (any of them, case-insensitive), ``path`` (a glob on
the path template where ``*`` also crosses ``/``: ``/pets*`` matches ``/pets/{petId}``),
``tags`` (the operation has any of them), ``operationId`` (a glob). A rule with no criteria
matches every operation.

An operation is left out when an ``exclude`` rule matches it, or when there are ``include``
rules and none matches it. Otherwise what it becomes is the ``as`` of the first matching
``rules`` entry, else of the first matching ``include`` rule that has one, else ``tool``.
``as: exclude`` leaves it out.

Problems with the options themselves have a ``field`` like ``openapi.include[0].methods``
and the location :data:`OPTIONS_FILE`: the caller knows where the manifest wrote them.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from mcpgen.problems import Level, Location, Problem, Problems

OPTIONS_FILE = "<manifest openapi options>"
KINDS = ("tool", "resource", "resourceTemplate", "exclude")
OVERRIDE_KEYS = ("name", "title", "description", "annotations", "scopes", "task", "poll")
_RULE_KEYS = ("methods", "path", "tags", "operationId", "as")


@dataclass(frozen=True)
class Rule:
    where: str
    methods: frozenset[str] | None = None
    path: str | None = None
    tags: frozenset[str] | None = None
    operation_id: str | None = None
    kind: str | None = None

    def matches(self, method: str, path: str, tags: list[str], operation_id: str | None) -> bool:
        if self.methods is not None and method.lower() not in self.methods:
            return False
        if self.path is not None and not fnmatch.fnmatchcase(path, self.path):
            return False
        if self.tags is not None and not self.tags.intersection(tags):
            return False
        return self.operation_id is None or (
            operation_id is not None and fnmatch.fnmatchcase(operation_id, self.operation_id)
        )


@dataclass
class Options:
    include: list[Rule] = field(default_factory=list)
    exclude: list[Rule] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    deprecated: bool = False  # import operations the document marks deprecated

    def kind(self, method: str, path: str, tags: list[str], operation_id: str | None) -> str:
        """``tool``, ``resource``, ``resourceTemplate`` or ``exclude`` for one operation."""
        args = (method, path, tags, operation_id)
        excluded = [r for r in self.exclude if r.matches(*args)]
        self.used.update(r.where for r in excluded)
        if excluded:
            return "exclude"
        included = [r for r in self.include if r.matches(*args)]
        self.used.update(r.where for r in included)
        if self.include and not included:
            return "exclude"
        for rule in self.rules:
            if rule.matches(*args):
                self.used.add(rule.where)
                return rule.kind or "tool"
        for rule in included:
            if rule.kind:
                return rule.kind
        return "tool"

    def all_rules(self) -> list[Rule]:
        return [*self.include, *self.exclude, *self.rules]


def option_problem(level: Level, where: str, message: str) -> Problem:
    return Problem(level, Location(OPTIONS_FILE), where, message)


def parse_options(raw: Any, problems: Problems) -> Options:
    options = Options()
    if raw is None:
        return options
    if not isinstance(raw, dict):
        problems.add(option_problem(Level.ERROR, "openapi", "options must be a mapping"))
        return options
    for section in ("include", "exclude", "rules"):
        items = raw.get(section, [])
        if not isinstance(items, list):
            problems.add(option_problem(Level.ERROR, f"openapi.{section}", "must be a list"))
            continue
        parsed = [
            rule
            for index, item in enumerate(items)
            if (rule := _rule(item, f"openapi.{section}[{index}]", problems)) is not None
        ]
        setattr(options, section, parsed)
    deprecated = raw.get("deprecated", False)
    if isinstance(deprecated, bool):
        options.deprecated = deprecated
    else:
        problems.add(option_problem(Level.ERROR, "openapi.deprecated", "must be true or false"))
    overrides = raw.get("overrides", {})
    if not isinstance(overrides, dict):
        problems.add(option_problem(Level.ERROR, "openapi.overrides", "must be a mapping"))
        return options
    for key, value in overrides.items():
        where = f"openapi.overrides.{key}"
        if not isinstance(value, dict):
            problems.add(option_problem(Level.ERROR, where, "an override must be a mapping"))
            continue
        accepted: dict[str, Any] = {}
        for name, item in value.items():
            if name not in OVERRIDE_KEYS:
                known = ", ".join(OVERRIDE_KEYS)
                message = f"unknown override {name!r} ignored (known: {known})"
                problems.add(option_problem(Level.WARNING, f"{where}.{name}", message))
            elif name == "annotations" and not isinstance(item, dict):
                problems.add(option_problem(Level.ERROR, f"{where}.{name}", "must be a mapping"))
            elif name == "scopes":
                if not isinstance(item, list) or not all(isinstance(s, str) and s for s in item):
                    problems.add(
                        option_problem(Level.ERROR, f"{where}.{name}", "must be a list of scopes")
                    )
                else:
                    accepted[name] = item
            elif name in ("task", "poll"):
                problem = _async_problem(name, item)
                if problem:
                    problems.add(option_problem(Level.ERROR, f"{where}.{name}", problem))
                else:
                    accepted[name] = item
            elif name != "annotations" and not isinstance(item, str):
                problems.add(option_problem(Level.ERROR, f"{where}.{name}", "must be a string"))
            else:
                accepted[name] = item
        options.overrides[str(key)] = accepted
    return options


def _async_problem(name: str, item: Any) -> str | None:
    """What is wrong with a ``task`` or ``poll`` override (docs/tasks.md), or None."""
    if name == "task":
        ok = item is False or item in ("optional", "required")
        return None if ok else "must be optional, required or false"
    if item is False:
        return None
    if not isinstance(item, dict) or set(item) - {"interval", "timeout"}:
        return "must be false or a mapping with interval and timeout (seconds)"
    for key, value in item.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return f"{key} must be a positive number of seconds"
    return None


def _rule(item: Any, where: str, problems: Problems) -> Rule | None:
    if not isinstance(item, dict):
        problems.add(option_problem(Level.ERROR, where, "a rule must be a mapping"))
        return None
    bad = False
    for key in item:
        if key not in _RULE_KEYS:
            message = f"unknown rule key {key!r} (known: {', '.join(_RULE_KEYS)})"
            problems.add(option_problem(Level.ERROR, f"{where}.{key}", message))
            bad = True
    methods = _strings(item, "methods", where, problems)
    tags = _strings(item, "tags", where, problems)
    values: dict[str, str | None] = {}
    for key in ("path", "operationId", "as"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            problems.add(option_problem(Level.ERROR, f"{where}.{key}", "must be a string"))
            bad = True
            value = None
        values[key] = value
    if values["as"] is not None and values["as"] not in KINDS:
        message = f"'as' must be one of {', '.join(KINDS)}, not {values['as']!r}"
        problems.add(option_problem(Level.ERROR, f"{where}.as", message))
        bad = True
    if bad or methods is False or tags is False:
        return None
    return Rule(
        where=where,
        methods=None if methods is None else frozenset(m.lower() for m in methods),
        path=values["path"],
        tags=None if tags is None else frozenset(tags),
        operation_id=values["operationId"],
        kind=values["as"],
    )


def _strings(item: dict[str, Any], key: str, where: str, problems: Problems) -> Any:
    """The list of strings at ``key``, None when absent, False (reported) when malformed."""
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(option_problem(Level.ERROR, f"{where}.{key}", "must be a list of strings"))
        return False
    return value
