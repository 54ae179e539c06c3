"""The fixture server as a process: ``python tests/runtime/rtserve.py [server flags]``
runs it through the runtime's own command line (``mcpgen.runtime.cli.main``).

``RTKIT_AUTH`` picks the auth (oauth, bearer, apiKey, none; default oauth) and
``RTKIT_HIDE=1`` hides what a caller may not use. ``rtserve:create_app`` is the app
factory several uvicorn workers import.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rtkit

from mcpgen.runtime import cli
from mcpgen.runtime.asgi import app_from_env

SPEC = rtkit.make_spec(
    os.environ.get("RTKIT_AUTH", "oauth"), hide=os.environ.get("RTKIT_HIDE") == "1"
)
if os.environ.get("RTKIT_MANGLED") == "1":  # (test_result_encoding.py)
    SPEC = rtkit.with_mangled(SPEC)


def create_app() -> object:
    return app_from_env(SPEC, rtkit.factory(SPEC))


if __name__ == "__main__":
    cli.main(SPEC, rtkit.factory(SPEC), "rtserve:create_app", sys.argv[1:])
