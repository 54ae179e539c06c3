"""The runtime package's public names: re-exported from ``api`` lazily, unknown names an
AttributeError (never a recursion), in a fresh interpreter as a handler would meet them."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

PROBE = """
import mcpgen.runtime as runtime
from mcpgen.runtime import api
try:
    runtime.no_such_name
except AttributeError as exc:
    print("missing:", exc)
print("names:", all(getattr(runtime, n) is getattr(api, n) for n in api.__all__))
"""


def test_names_resolve_and_unknown_names_are_attribute_errors() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "missing: module 'mcpgen.runtime' has no attribute 'no_such_name'" in done.stdout
    assert "names: True" in done.stdout


def test_a_first_lookup_of_an_unknown_name_does_not_recurse() -> None:
    probe = "import mcpgen.runtime as r\ntry:\n    r.nope\nexcept AttributeError:\n    print('ok')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
