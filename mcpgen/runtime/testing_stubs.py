"""Whether a handler is still the stub mcpgen wrote, read from its source: what the generated
tests ask of a tool no example arguments could be made for (carried only with one)."""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap


def unwritten(module: str, function: str = "handle") -> bool:
    """The handler in ``module`` still only raises ``NotImplementedError`` (the stub mcpgen
    wrote), read from its source: for a tool no example arguments could be made for."""
    try:
        source = inspect.getsource(getattr(importlib.import_module(module), function))
        tree = ast.parse(textwrap.dedent(source))
    except (ImportError, AttributeError, OSError, TypeError, SyntaxError):
        return False
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = [
        s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
