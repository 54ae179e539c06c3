"""The format checks of tool arguments (``schemas.CHECKED_FORMATS``): jsonschema's own
checkers for JSON Schema 2020-12, which use the standard library for ``date``, ``email`` and
``idn-email`` (an ``@``), ``ipv4``, ``ipv6`` and ``uuid``, and rfc3339-validator (what
jsonschema registers ``date-time`` and ``time`` with, hence imported here: a package that
carries this module depends on it) for ``date-time`` and ``time``. Formats whose checker
needs another optional package (``uri``, ``hostname``, ``duration``...) are not checked.
"""

from __future__ import annotations

import rfc3339_validator  # type: ignore[import-untyped]  # noqa: F401  (jsonschema needs it)
from jsonschema import Draft202012Validator, FormatChecker

from .schemas import CHECKED_FORMATS

CHECKER = FormatChecker(formats=())
CHECKER.checkers = {
    name: Draft202012Validator.FORMAT_CHECKER.checkers[name] for name in sorted(CHECKED_FORMATS)
}
