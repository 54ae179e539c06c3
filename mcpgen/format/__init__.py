"""Generated Python in black's style: one ``ruff format`` call over every file of a build
(ruff is configured to write black's bytes), or black itself (``--formatter black``).

Black stays the contract: CI runs ``black --check`` over every generated example and a
GitHub-sized build. Ruff is the default engine because it formats a big API's 240,000
lines in about a second where black takes minutes (bench/README.md).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

Engine = Literal["ruff", "black"]
ENGINES: tuple[Engine, ...] = ("ruff", "black")
LINE_LENGTH = 100
# black's defaults, spelled out (ruff's defaults are the same; a user's config is ignored)
RUFF_SETTINGS = (
    f"line-length = {LINE_LENGTH}",
    'target-version = "py311"',
    'format.quote-style = "double"',
    'format.indent-style = "space"',
    "format.skip-magic-trailing-comma = false",
    'format.line-ending = "lf"',
)


class FormatError(Exception):
    """Generated code that does not parse: a bug in mcpgen, reported with the file."""


def format_files(files: Mapping[str, str], engine: Engine = "ruff") -> dict[str, str]:
    if not files:
        return {}
    if engine == "black":
        return {path: _black(text, path) for path, text in files.items()}
    return _ruff(files)


def _ruff(files: Mapping[str, str]) -> dict[str, str]:
    """One ``ruff format`` run over a folder of the files (flat names: nothing in a
    generated path can match ruff's default excludes)."""
    paths = list(files)
    with tempfile.TemporaryDirectory(prefix="mcpgen-format-") as folder:
        root = Path(folder)
        for index, path in enumerate(paths):
            (root / f"f{index}.py").write_text(files[path], "utf-8", newline="\n")
        config = [arg for setting in RUFF_SETTINGS for arg in ("--config", setting)]
        command = [_ruff_bin(), "format", "--isolated", "--no-cache", *config, "."]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:  # ruff's message, with our file names for its flat ones
            named = re.sub(r"f(\d+)\.py", lambda m: paths[int(m.group(1))], done.stderr)
            raise FormatError("generated code does not parse: " + " ".join(named.split())[:2000])
        return {path: (root / f"f{i}.py").read_text("utf-8") for i, path in enumerate(paths)}


def _ruff_bin() -> str:
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return "ruff"


def _black(source: str, path: str) -> str:
    import black
    from black.mode import TargetVersion

    # (string normalization and the magic trailing comma: black's defaults)
    mode = black.Mode(target_versions={TargetVersion.PY311}, line_length=LINE_LENGTH)
    try:
        return black.format_str(source, mode=mode)
    except black.parsing.InvalidInput as exc:
        raise FormatError(f"{path}: generated code does not parse: {exc}") from None
