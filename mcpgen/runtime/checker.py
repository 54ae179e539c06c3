"""A big call's first look on the strict-model fast path (``tools._strictly``): its model's
strict validation made to stop at the first bad item. pydantic collects every error, which
the fast path throws away (jsonschema explains): 400,000 bad items cost some 140 MB."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaValidator

BIG = 1000  # members and elements (at any depth) from which a call is checked first
# The core schema types of the fast path's models (``model/fastpath.py``): a model holding
# any other (a validator function, say) has no checker, nor one with an alias or __init__.
KNOWN = frozenset(
    {
        "definitions", "definition-ref", "model", "model-fields", "model-field", "default",
        "nullable", "list", "dict", "str", "int", "float", "bool", "literal", "any", "date",
        "datetime", "time", "uuid",
    }
)  # fmt: skip
OPAQUE = frozenset({"metadata", "serialization", "default"})  # not schemas


@cache
def checker(model: type[BaseModel]) -> Callable[..., Any] | None:
    """``model``'s strict validation, each list and dict stopping at its first bad item, an
    object of more keys than its (forbidding) model has fields refused at once, no model
    built (pydantic-core would validate that with its class's own validator, which collects
    every error); None for a schema not known here (the model's validation decides alone)."""
    try:  # (pydantic-core's own validator: a TypeAdapter left a model's definitions unbuilt)
        return SchemaValidator(_fail_fast(model.__pydantic_core_schema__)).validate_python
    except Exception:  # a shape not known here (or a pydantic-core that refuses this one)
        return None


class _Shell:
    """What the checker builds for a model."""


def _fail_fast(node: Any) -> Any:
    if isinstance(node, list):
        return [_fail_fast(item) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if isinstance(kind, str) and kind not in KNOWN:
        raise ValueError(f"a core schema of type {kind!r}")
    copy = {key: value if key in OPAQUE else _fail_fast(value) for key, value in node.items()}
    if kind in ("list", "dict"):
        copy["fail_fast"] = True
    if kind != "model":
        return copy
    fields = copy["schema"]["fields"]
    aliased = any("validation_alias" in field for field in fields.values())
    if aliased or any(copy.get(key) for key in ("custom_init", "root_model", "post_init")):
        raise ValueError("a model of more than plain fields")
    copy["cls"] = _Shell
    if copy.get("config", {}).get("extra_fields_behavior") != "forbid":
        return copy
    ref = {"ref": copy.pop("ref")} if "ref" in copy else {}  # (the name definitions use)
    keys = {"type": "dict", "max_length": len(fields)}  # (the model: an error per unknown key)
    return {"type": "chain", "steps": [keys, copy], **ref}
