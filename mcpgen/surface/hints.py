"""Tool annotations: hints compared by their effective values, with the MCP defaults."""

from __future__ import annotations

from typing import Any

from mcpgen.check.schemas import escape
from mcpgen.model.compact import HINT_DEFAULTS  # MCP's defaults for tool annotations

from .changes import BREAKING, COMPATIBLE, DOCS, WHY_HINT, Add, _presence, _same_text

Json = Any

# each hint: its safe value, and why turning away from it breaks clients
RISKS = {
    "readOnlyHint": (
        True,
        "clients that run read-only tools without asking may now change data unasked",
    ),
    "destructiveHint": (
        False,
        "clients that allowed it as non-destructive may now lose data unasked",
    ),
    "idempotentHint": (True, "clients that retry it after a failure may now repeat its effect"),
    "openWorldHint": (
        False,
        "the tool now reaches outside systems; clients that allowed it as closed may not want that",
    ),
}
WRITES = ("destructiveHint", "idempotentHint")  # meaningful only for tools that write


def _hints(annotations: Json) -> dict[str, bool]:
    data = annotations if isinstance(annotations, dict) else {}
    hints = {k: bool(data.get(k, default)) for k, default in HINT_DEFAULTS.items()}
    if hints["readOnlyHint"]:
        hints["destructiveHint"], hints["idempotentHint"] = False, True
    return hints


def compare_annotations(add: Add, item: str, old: Json, new: Json) -> None:
    if old == new:
        return
    a, b = _hints(old), _hints(new)
    for hint, (safe, why) in RISKS.items():
        if a[hint] == b[hint] or (hint in WRITES and a["readOnlyHint"] != b["readOnlyHint"]):
            continue  # a tool that starts or stops writing: readOnlyHint says it all
        where = f"/annotations/{hint}"
        change = f"{hint} {str(a[hint]).lower()} -> {str(b[hint]).lower()}"
        if b[hint] == safe:
            promise = "the tool now promises to change nothing" if hint == "readOnlyHint" else ""
            add(COMPATIBLE, item, where, change, promise or "a safer promise")
            continue
        if hint == "readOnlyHint":
            effects = {
                "destructive": b["destructiveHint"],
                "not idempotent": not b["idempotentHint"],
            }
            now = " and ".join(effect for effect, on in effects.items() if on)
            change += f" (now {now})" if now else ""
        add(BREAKING, item, where, change, why)
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
