"""Turning user-chosen names into Python names, in exactly one place."""

from __future__ import annotations

import builtins
import functools
import hashlib
import keyword
import re
import unicodedata

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")
# Keywords, builtins, and ``l`` (ruff's E741/E743: an ambiguous name for a variable or method).
RESERVED = frozenset({*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "l"})


def words(name: str) -> list[str]:
    """Split a name on separators and case changes: 'getHTTPResponse-v2' -> get, http, response, v2."""
    spaced = _WORD_BOUNDARY.sub(" ", name)
    return [w.lower() for w in _NON_WORD.split(spaced) if w]


@functools.cache  # the same names are derived by the importer, the checks and the model
def snake(name: str) -> str:
    """A valid, non-reserved Python identifier in snake case (never empty)."""
    result = "_".join(words(name)) or "x"
    result = "n" + result if result[0].isdigit() else result
    return result + "_" if result in RESERVED else result


def python_reading(name: str) -> str:
    """``name`` with each character Python normalizes in an identifier (NFKC) as Python
    reads it: ``ﬁ`` -> ``fi``, ``µs`` -> ``μs``, ``Ǆ`` -> ``DŽ`` (others, ``²``, stay).
    NFKC leaves every ASCII character as it is (GitHub's 18,000 names: 35 ms -> 3)."""
    if name.isascii():
        return name
    return "".join(
        unicodedata.normalize("NFKC", c) if ("a" + c).isidentifier() else c for c in name
    )


def env_base(name: str) -> str:
    """The base of a server's environment variables: ``my-server`` -> ``MY_SERVER``."""
    return snake(name).strip("_").upper()


@functools.cache
def pascal(name: str) -> str:
    """A valid class name in PascalCase (never empty, never starting with a digit)."""
    result = "".join(w[:1].upper() + w[1:] for w in words(name)) or "X"
    return "N" + result if result[0].isdigit() else result


# What a models module or a handler stub imports, and keywords spelled like class names: a
# shared definition (``$defs``) named one would shadow an import, or not be Python.
RESERVED_CLASS_NAMES = frozenset(
    {
        "Annotated", "Any", "AnyUrl", "McpgenBaseModel", "AwareDatetime", "BaseModel", "ConfigDict", "Field",
        "Literal", "Optional", "RootModel", "TypeAliasType", "Union", "date", "datetime",
        "time", "timedelta", "UUID", "Decimal", "Base64Str", "NaiveDatetime", "AnyHttpUrl",
        "None", "True", "False", "Context", "ToolReturn", "ResourceReturn", "PromptReturn",
        # what a string ``format`` imports (ipv4, ipv6-network, path, uuid4, ulid)
        "IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network", "Path",
        "UUID1", "UUID3", "UUID4", "UUID5", "ULID",
    }
)  # fmt: skip
CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def own_def_class(owner: str, name: str) -> str:
    """A tool's own (not shared) definition's class: ``AddInput`` + ``unit`` -> ``AddInputUnit``."""
    return owner + name[:1].upper() + name[1:]


def kept_class_name(name: str) -> bool:
    """Whether the model generator keeps a shared definition's name as its class name."""
    return bool(CLASS_NAME.match(name)) and name not in RESERVED_CLASS_NAMES


def kebab(name: str) -> str:
    return "-".join(words(name)) or "x"


# Names generated code binds where user-derived names also appear: parameters (``ctx``,
# ``self``, ``progress``), locals of the wiring and client methods, modules they call.
GENERATED_NAMES = frozenset(
    {"ctx", "self", "cls", "progress", "args", "arguments", "variables"}
    | {"given", "result", "output", "parse", "expand", "models"}
)


def model_class(name: str, suffix: str) -> str:
    """``weather-current`` + ``Input`` -> ``WeatherCurrentInput``."""
    return pascal(name) + suffix


def kwarg(name: str) -> str:
    """A keyword argument for a JSON property, template variable or prompt argument."""
    result = snake(name)
    return result + "_" if result in GENERATED_NAMES else result


def completion_ident(target: str, ref: str, argument: str) -> str:
    return ident(f"{target}_{ref}_{argument}")


# A handler's module is named by its identifier: a file name holds at most 255 bytes.
MOST_IDENT = 120


def ident(name: str) -> str:
    """The identifier of a tool, resource or prompt (its handler module, wiring function,
    client method): at most ``MOST_IDENT`` characters, a digest of the whole keeping two apart."""
    result = snake(name)
    if len(result) <= MOST_IDENT:
        return result
    digest = hashlib.sha256(result.encode("utf-8")).hexdigest()[:10]
    return f"{result[: MOST_IDENT - 11]}_{digest}"


# What the typed client's base classes define and the modules its annotations name: a
# tool's method may not shadow them.
CLIENT_NAMES = frozenset(
    {"call", "call_result", "read", "prompt", "complete", "connect", "stdio", "http"}
    | {"websocket", "sse", "client", "package", "portal", "typed", "client_class"}
    | {"start_task", "wait_task", "task_status", "cancel_task", "models", "types", "extensions"}
)

# The base classes the client module imports: ``{prefix}Client`` may not take their names.
CLIENT_BASE_CLASSES = frozenset({"BaseClient", "BaseSyncClient", "LegacyClient", "TaskClient"})


def class_prefix(name: str) -> str:
    """The prefix of a server's client classes: ``travel`` -> ``Travel`` (``TravelClient``),
    ``task`` -> ``TaskServer`` (``TaskClient`` is a base class)."""
    prefix = pascal(name)
    while {prefix + "Client", prefix + "SyncClient"} & CLIENT_BASE_CLASSES:
        prefix += "Server"
    return prefix


# The typed client's methods: a tool's (``read`` -> ``read_``), a resource's, a prompt's.
def client_method(ident: str) -> str:
    return ident + "_" if ident in CLIENT_NAMES or ident.startswith("_") else ident


def resource_method(ident: str) -> str:
    return "read_" + ident


def prompt_method(ident: str) -> str:
    return "prompt_" + ident


def handler_path(kind: str, ident: str) -> str:
    """A handler's file in its package: ``handlers/tools/add.py``."""
    return f"handlers/{kind}/{ident}.py"


def package_version(version: str) -> str:
    """``version`` as a PEP 440 version pip accepts: as written when it is one, else its
    numbers (``2018-08-01`` -> ``2018.8.1``), else ``0.0.0`` (``version unknown``)."""
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(version))
    except InvalidVersion:
        numbers = [str(int(n)) for n in re.findall(r"\d+", version)][:4]
        return ".".join(numbers) if numbers else "0.0.0"
