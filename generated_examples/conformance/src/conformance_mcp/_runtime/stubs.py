"""Telling a handler stub that is still unwritten from a real ``NotImplementedError``."""

from __future__ import annotations

from pathlib import PurePosixPath

STUB_FUNCTIONS = frozenset({"handle", "read", "render", "complete"})


def is_stub(exc: BaseException, handler_path: str) -> bool:
    """True when ``exc`` was raised by the handler function itself (``raise
    NotImplementedError`` in the stub mcpgen wrote), not somewhere it called."""
    if not handler_path:
        return False
    tail = PurePosixPath(handler_path).parts[-4:]  # <package>/handlers/<kind>/<module>.py
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    where = PurePosixPath(code.co_filename.replace("\\", "/")).parts[-len(tail) :]
    return tuple(where) == tuple(tail) and code.co_name in STUB_FUNCTIONS
