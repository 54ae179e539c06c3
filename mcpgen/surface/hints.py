"""Tool annotations: hints compared by their effective values, with the MCP defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .changes import (
    BREAKING,
    COMPATIBLE,
    DOCS,
    WHY_DESTRUCTIVE,
    WHY_HINT,
    WHY_NOT_IDEMPOTENT,
    WHY_NOT_READ_ONLY,
    WHY_OPEN_WORLD,
    WHY_READ_ONLY,
    WHY_SAFER,
    _presence,
    _same_text,
    escape,
)

Json = Any
Add = Callable[[str, str, str, str, str], None]

HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


def _hints(annotations: Json) -> dict[str, bool]:
    data = annotations if isinstance(annotations, dict) else {}
    hints = {k: bool(data.get(k, default)) for k, default in HINT_DEFAULTS.items()}
    if hints["readOnlyHint"]:  # the other two mean something only for tools that write
        hints["destructiveHint"], hints["idempotentHint"] = False, True
    return hints


def compare_annotations(add: Add, item: str, old: Json, new: Json) -> None:
    """Tool annotations compared by their effective hints (MCP defaults filled in)."""
    if old == new:
        return
    a, b = _hints(old), _hints(new)
    if a["readOnlyHint"] and not b["readOnlyHint"]:
        effects = [
            text
            for text, on in (
                ("destructive", b["destructiveHint"]),
                ("not idempotent", not b["idempotentHint"]),
            )
            if on
        ]
        now = f" (now {' and '.join(effects)})" if effects else ""
        add(
            BREAKING,
            item,
            "/annotations/readOnlyHint",
            f"readOnlyHint true -> false{now}",
            WHY_NOT_READ_ONLY,
        )
    elif b["readOnlyHint"] and not a["readOnlyHint"]:
        add(
            COMPATIBLE,
            item,
            "/annotations/readOnlyHint",
            "readOnlyHint false -> true",
            WHY_READ_ONLY,
        )
    elif not b["readOnlyHint"]:
        if b["destructiveHint"] and not a["destructiveHint"]:
            add(
                BREAKING,
                item,
                "/annotations/destructiveHint",
                "destructiveHint false -> true",
                WHY_DESTRUCTIVE,
            )
        elif a["destructiveHint"] and not b["destructiveHint"]:
            add(
                COMPATIBLE,
                item,
                "/annotations/destructiveHint",
                "destructiveHint true -> false",
                WHY_SAFER,
            )
        if a["idempotentHint"] and not b["idempotentHint"]:
            add(
                BREAKING,
                item,
                "/annotations/idempotentHint",
                "idempotentHint true -> false",
                WHY_NOT_IDEMPOTENT,
            )
        elif b["idempotentHint"] and not a["idempotentHint"]:
            add(
                COMPATIBLE,
                item,
                "/annotations/idempotentHint",
                "idempotentHint false -> true",
                WHY_SAFER,
            )
    if b["openWorldHint"] and not a["openWorldHint"]:
        add(
            BREAKING,
            item,
            "/annotations/openWorldHint",
            "openWorldHint false -> true",
            WHY_OPEN_WORLD,
        )
    elif a["openWorldHint"] and not b["openWorldHint"]:
        add(
            COMPATIBLE,
            item,
            "/annotations/openWorldHint",
            "openWorldHint true -> false",
            WHY_SAFER,
        )
    old_d = old if isinstance(old, dict) else {}
    new_d = new if isinstance(new, dict) else {}
    for key in sorted((set(old_d) | set(new_d)) - set(HINT_DEFAULTS)):
        x, y = old_d.get(key), new_d.get(key)
        if _same_text(x, y):
            continue
        level = DOCS if key == "title" else COMPATIBLE
        add(level, item, f"/annotations/{escape(key)}", _presence(key, x, y), WHY_HINT)


TASK_SUPPORT = ("forbidden", "optional", "required")  # execution.taskSupport, MCP 2025-11-25


def _task_support(execution: Json) -> str:
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in TASK_SUPPORT else "forbidden"


def compare_execution(add: Add, item: str, old: Json, new: Json) -> None:
    """``execution.taskSupport`` (``task:`` in the manifest, docs/tasks.md): a tool that now
    needs a task refuses plain calls, and one that no longer offers tasks refuses task calls."""
    a, b = _task_support(old), _task_support(new)
    if a == b:
        if old != new:
            add(COMPATIBLE, item, "/execution", _presence("execution", old, new), WHY_HINT)
        return
    path, change = "/execution/taskSupport", f"taskSupport {a} -> {b}"
    if b == "required":
        add(BREAKING, item, path, change, "plain tools/call requests are now refused")
    elif b == "forbidden":
        add(BREAKING, item, path, change, "task-augmented calls are now refused")
    else:
        add(COMPATIBLE, item, path, change, "every call that worked still does")
