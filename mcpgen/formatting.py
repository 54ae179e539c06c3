"""black, in-process, with a pinned mode: check mode compares formatted text."""

from __future__ import annotations

import black
from black.mode import Mode, TargetVersion
from black.parsing import InvalidInput

MODE = Mode(
    target_versions={TargetVersion.PY311},
    line_length=100,
    string_normalization=True,
    magic_trailing_comma=True,
)


class FormatError(Exception):
    """Generated code that black cannot parse: a bug in mcpgen, reported with the file."""


def format_python(source: str, path: str) -> str:
    try:
        return black.format_str(source, mode=MODE)
    except InvalidInput as exc:
        raise FormatError(f"{path}: generated code does not parse: {exc}") from None
