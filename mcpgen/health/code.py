"""A handler's source read with ``ast`` (never run): a stub, or using fields now gone?"""

from __future__ import annotations

import ast
import keyword
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpgen import identifiers as names

if TYPE_CHECKING:
    from mcpgen.model.types import Manifest, Tool

# the function each kind of handler file defines (see templates/stubs)
ENTRY_POINTS = {
    "tools": "handle",
    "resources": "read",
    "prompts": "render",
    "completions": "complete",
}


def parse(path: Path) -> ast.Module | str:
    """The module, or why it cannot be read (one line)."""
    try:
        return ast.parse(path.read_text("utf-8"), str(path))
    except SyntaxError as exc:
        return f"does not parse: {exc.msg} (line {exc.lineno})"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot be read: {exc}"


def entry_point(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function ``name`` (the last definition wins, as at import)."""
    functions = (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return next((n for n in reversed(list(functions)) if n.name == name), None)


def unimplemented(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The body is ``raise NotImplementedError`` (a docstring, ``pass`` and ``...`` aside)."""
    body = [
        node
        for node in function.body
        if not isinstance(node, ast.Pass)
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    match body:
        case [ast.Raise(exc=ast.Name(id=name) | ast.Call(func=ast.Name(id=name)))]:
            return name == "NotImplementedError"
    return False


def _plain(prop: str) -> bool:
    """Whether a JSON property certainly becomes the model field of that name."""
    return prop.isidentifier() and not keyword.iskeyword(prop) and not prop.startswith("_")


def stale_fields(
    tree: ast.Module, tool: Tool, removed: dict[str, set[str]], required_output: set[str]
) -> list[tuple[int, str]]:
    """(line, what) of each use of a removed field (``removed`` by schema key), each output
    missing a new required one, and each output field set that the model now drops."""
    breaks = ": it no longer type-checks"
    findings: list[tuple[int, str]] = []
    handle = entry_point(tree, "handle")
    gone_in, gone_out = (
        {p for p in removed.get(k, ()) if _plain(p)} for k in ("inputSchema", "outputSchema")
    )
    needed = {p for p in required_output if _plain(p)}
    # ``args``, whatever the user called it
    params = {handle.args.args[0].arg} if handle is not None and handle.args.args else set()
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        match node:
            case ast.Attribute(value=ast.Name(id=arg), attr=attr) if arg in params:
                if attr in gone_in:
                    model = tool.input_model or "the input"
                    message = f"reads {arg}.{attr}, which {model} no longer has"
                    findings.append((line, message + breaks))
            case ast.Call(func=ast.Name(id=called)) if called == tool.output_model:
                passed = {k.arg for k in node.keywords if k.arg is not None}
                spread = any(k.arg is None for k in node.keywords) or bool(node.args)
                for name in sorted(passed & gone_out):
                    message = f"passes {name}=, which {called} no longer has: the value is dropped"
                    findings.append((line, message))
                missing = sorted(needed - passed)
                if missing and not spread:
                    message = f"does not pass {', '.join(missing)}, now required by {called}"
                    findings.append((line, message + breaks))
    return sorted(findings)


def misfits(root: Path, manifest: Manifest) -> list[tuple[str, int, str, str]]:
    """(kind, index, handler file, what) of each handler whose entry function no longer
    takes the ``ctx`` the server passes (or not) after ``context:`` was flipped."""
    entries: list[tuple[str, int, Any, int]] = []  # kind, index, entry, arguments before ctx
    # (an imported operation's override always gets ctx; a resource's is passed by keyword)
    entries += [("tools", i, t, 1) for i, t in enumerate(manifest.tools) if not t.http]
    entries += [("resources", i, r, 0) for i, r in enumerate(manifest.resources) if r.has_handler]
    entries += [("prompts", i, p, 1) for i, p in enumerate(manifest.prompts) if p.handler]
    entries += [("completions", i, c, 2) for i, c in enumerate(manifest.completions) if c.handler]
    found = []
    for kind, index, entry, before in entries:
        handler = f"src/{manifest.server.package}/{names.handler_path(kind, entry.ident)}"
        tree = parse(root / handler) if (root / handler).is_file() else None
        function = ENTRY_POINTS[kind]
        node = entry_point(tree, function) if isinstance(tree, ast.Module) else None
        if node is None:
            continue
        args = node.args
        params = [*args.posonlyargs, *args.args]
        required = len(params) - len(args.defaults)
        if kind == "resources":  # called by keyword: ctx=ctx
            named = {a.arg for a in (*args.args, *args.kwonlyargs)}
            defaulted = {a.arg for a in params[required:]}
            defaulted |= {
                a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d
            }
            takes = "ctx" in named or args.kwarg is not None
            fits = takes if entry.context else "ctx" not in named or "ctx" in defaulted
        else:
            wanted = before + entry.context
            fits = required <= wanted and (wanted <= len(params) or args.vararg is not None)
        if fits:
            continue
        field = f"{kind}[{index}].context"
        what = f"{function}() requires ctx, but {field} is false: remove its ctx parameter"
        if entry.context:
            what = f"{function}() takes no ctx, but {field} is true: add a ctx: Context parameter"
        found.append((kind, index, handler, what + " (every call fails until then)"))
    return found
