"""Load YAML or JSON input into plain data, remembering where every value stood; the only
place that touches raw text. It refuses what a code generator must not trust (limits.py)."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from mcpgen.load import json_text
from mcpgen.load.document import Document, Overlay, display_path
from mcpgen.load.limits import MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_MANIFEST_BYTES, MAX_NODES
from mcpgen.load.positions import JsonPath, Positions, dotted
from mcpgen.problems import fail

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_NODES",
    "Document",
    "JsonPath",
    "Overlay",
    "Positions",
    "display_path",
    "dotted",
    "load_file",
    "load_text",
]


_JSON_START = re.compile(r"\s*\{")  # what looks like JSON is parsed as JSON first


def load_file(path: Path, max_bytes: int = MAX_MANIFEST_BYTES) -> Document:
    """Read and parse ``path``; raise InputError with a located message on any problem."""
    shown = display_path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise fail(shown, "not a regular file")
        if size > max_bytes:
            raise fail(shown, f"file is {size} bytes, larger than the limit of {max_bytes} bytes")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(shown, "file not found") from None
    except OSError as exc:
        raise fail(shown, f"cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)  # in bytes
        message = f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
        raise fail(shown, message, line, column) from None
    json_first = path.suffix.lower() == ".json"
    return load_text(text, shown, path.parent, json_first, decoded=True)


def load_text(
    text: str, file: str, base_dir: Path, json_first: bool = False, decoded: bool = False
) -> Document:
    """Parse ``text``: JSON when it is (fast), YAML otherwise. A ``.json`` file must be JSON.
    ``decoded``: ``text`` was decoded from UTF-8 (it holds no surrogate)."""
    if not text or text.isspace():  # (no copy of a big text)
        raise fail(file, "file is empty", 1, 1)
    if json_first or _JSON_START.match(text):
        try:
            watch = json_text._NumberWatch()
            data = json.loads(
                text,
                object_pairs_hook=json_text._no_duplicates,
                parse_int=watch.integer,
                parse_float=watch.real,
                parse_constant=watch.constant,
            )
        except json.JSONDecodeError as exc:
            if json_first:
                raise fail(file, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except (json_text._DuplicateKey, RecursionError):
            # raises the located duplicate or depth error
            with contextlib.suppress(json_text._ScanError, IndexError):
                json_text._json_positions(text, file)
        else:
            json_text._check_json_values(data, file, text, watch, decoded)
            return Document(file, base_dir, data, text)
    from mcpgen.load.yaml_text import _compose  # (PyYAML: 7 ms to import, for YAML only)

    data, positions = _compose(text, file)
    return Document(file, base_dir, data, text, positions)
