"""Tools: ``ToolTable.dispatch`` is the one place a handler is called from (``tools/call``, a
meta tool's ``call_operation``, code mode's ``execute``): it finds the tool, checks scopes,
validates the arguments, runs the handler under its timeout and turns what happened into a
result."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import Any, overload

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel, ValidationError

from .authz import Policy, current_identity
from .checker import BIG, checker
from .content import ToolReturn, adapter, has_non_finite, item_count, to_result, tool_error
from .context import Context, InputRequired, ModelT, input_required
from .errors import ECHOED, REDACTED, Forbidden, InvalidArguments, ToolError, echoed
from .schemas import validator as schema_validator
from .stubs import is_stub

logger = logging.getLogger("mcp_server")
Json = Any
Arguments = dict[str, Json] | BaseModel  # raw, or already validated by the input model
ToolCall = Callable[[Arguments, Context], Awaitable[ToolReturn]]
MAX_ERRORS = 10
MAX_KNOWN = 30  # names an unknown argument's error lists
PROBLEM_CHARS = 1000  # characters of one problem (a long key in its path, say)


class UnknownTool(Exception):
    """No tool of that name is shown (``ToolTable.find``)."""


@overload
def parse(model: type[ModelT], arguments: Arguments) -> ModelT: ...


@overload
def parse(model: object, arguments: Arguments) -> Any: ...


def parse(model: Any, arguments: Arguments) -> Any:
    """The handler's input: the instance the fast path validated, or a fresh validation
    (its failure is the caller's bad arguments). ``model`` may be a type alias (a schema
    without properties of its own: a map, a union), validated by an adapter."""
    is_model = isinstance(model, type)
    if is_model and isinstance(arguments, model):
        return arguments
    try:
        if is_model:
            return model.model_validate(arguments)
        return adapter(model).validate_python(plain(arguments))
    except ValidationError as exc:
        problems = [located(e["loc"], e["msg"]) for e in exc.errors()[:MAX_ERRORS]]
        raise InvalidArguments(model.__name__ if is_model else str(model), problems) from None


def plain(arguments: Arguments) -> dict[str, Json]:
    """The arguments as JSON data (what an imported operation sends)."""
    if isinstance(arguments, dict):
        return arguments
    data: dict[str, Json] = arguments.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


def located(path: Iterable[Any], message: str, root: str = "(arguments)") -> str:
    """``a.0.b: message``, ``root`` naming the top."""
    return f"{'.'.join(str(p) for p in path) or root}: {message}"


def _strictly(
    model: Callable[[], type[BaseModel]] | None, data: dict[str, Json]
) -> BaseModel | None:
    """``model``'s instance when its strict validation accepts ``data`` (so its schema
    does, ``fastpath``), else None: jsonschema then decides, also when a null (the model
    takes null for optional properties) or a number JSON cannot carry (the strict model
    takes NaN) appears; a big ``data`` meets ``checker`` first (which stops at a bad item)."""
    if model is None or (count := item_count(data, or_null=True)) < 0:
        return None
    try:
        if count > BIG and (check := checker(model())) is not None:
            check(data, strict=True)
        return model().model_validate(data, strict=True)
    except (ValueError, TypeError, RecursionError, ImportError):
        return None  # not accepted (or the models do not import): jsonschema decides


@dataclass
class ToolBinding:
    definition: dict[str, Json]
    call: ToolCall
    handler_path: str = ""
    timeout: float | None = None
    # The input model, when strict validation of it implies the input schema (decided at
    # build time): a call it accepts skips jsonschema.
    strict_model: Callable[[], type[BaseModel]] | None = None
    # The same for the output model and the output schema (a result it accepts is valid).
    output_model: Callable[[], type[BaseModel]] | None = None
    secret: frozenset[str] = frozenset()  # arguments the API marks secret (password, writeOnly)

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    @property
    def input_schema(self) -> Json:
        return self.definition.get("inputSchema")

    @property
    def output_schema(self) -> Json:  # (None: results are not checked)
        return self.definition.get("outputSchema")

    @cached_property
    def tool(self) -> types.Tool:
        return types.Tool.model_validate(self.definition)

    @cached_property
    def size(self) -> int:
        """Bytes of the definition as ASCII-escaped JSON (for page sizes)."""
        return len(json.dumps(self.definition))

    def validated(self, arguments: dict[str, Json]) -> BaseModel | None:
        return _strictly(self.strict_model, arguments)

    @cached_property
    def validator(self) -> Any:
        return schema_validator(self.input_schema, formats=True)

    @cached_property
    def output_validator(self) -> Any:
        schema = self.output_schema
        return None if schema is None else schema_validator(schema)

    def result_errors(self, result: types.CallToolResult) -> list[str]:
        """Where a structured result departs from the output schema (the full one)."""
        data = result.structured_content
        if result.is_error or data is None or _strictly(self.output_model, data) is not None:
            return []
        validator = self.output_validator  # (built on first use: after the model's verdict)
        if validator is None:
            return []
        try:
            errors = list(islice(validator.iter_errors(data), MAX_ERRORS))  # (not all)
        except RecursionError:
            return ["(result): nested too deeply"]
        return [located(e.absolute_path, e.message[:200], "(result)") for e in errors]

    def checked(self, result: types.CallToolResult) -> types.CallToolResult:
        """``result``, or a tool error when it departs from the output schema (the handler
        built it; ``operation_binding``: what a wrapped API answered is passed on)."""
        problems = self.result_errors(result)
        if not problems:
            return result
        logger.error("tool %s built a result its output schema refuses: %s", self.name, problems)
        return tool_error(
            f"Tool {self.name!r} failed: its result does not match its output schema "
            f"({problems[0]})"
        )

    def argument_errors(self, arguments: dict[str, Json]) -> list[str]:
        if has_non_finite(arguments):
            return ["(arguments): NaN and infinite numbers are not JSON"]
        try:  # (the first few: each error found is kept, and a body holds a million)
            errors = list(islice(self.validator.iter_errors(arguments), MAX_ERRORS))
        except RecursionError:
            return ["(arguments): nested too deeply"]
        except re.error:  # a pattern Python cannot use (refused at build time since 0.2)
            logger.error("tool %s: its input schema has a pattern Python cannot use", self.name)
            return ["(arguments): this tool's schema cannot be checked (see the server log)"]
        errors.sort(key=lambda e: list(e.path))
        hidden = [repr(arguments[n]) for n in self.secret if n in arguments]  # (mostly none)
        return [_problem(e, hidden) for e in errors]


class ToolTable:
    def __init__(
        self,
        bindings: Sequence[ToolBinding],
        policy: Policy | None = None,
        hidden: Sequence[str] = (),
    ) -> None:
        self.by_name = {b.name: b for b in bindings}
        self.order = [b.name for b in bindings]
        self.policy = policy or Policy()
        self.hidden = set(hidden)
        self.registry: Mapping[str, Any] = {}  # and events: set by build_server
        self.events: Any = None

    def set_enabled(self, name: str, enabled: bool) -> None:
        if name not in self.by_name:
            raise KeyError(f"no tool named {name!r}")
        (self.hidden.discard if enabled else self.hidden.add)(name)

    def visible(self, identity: Any) -> list[str]:  # what tools/list shows this caller
        return [name for name in self.order if self._shown(identity, name)]

    def _shown(self, identity: Any, name: str) -> bool:
        return name not in self.hidden and self.policy.visible(identity, "tool", name)

    def input_schema(self, name: str) -> Json:
        """What the SDK checks a 2026 call's ``Mcp-Param-*`` headers against, before any
        handler: None for a tool this caller is not shown (its 400 told it from one that
        does not exist, and named its arguments)."""
        binding = self.by_name.get(name)
        if binding is None or not self._shown(current_identity(), name):
            return None
        return binding.input_schema

    def find(self, name: str) -> ToolBinding:
        binding = self.by_name.get(name)
        if binding is None or name in self.hidden:
            raise UnknownTool(name)
        return binding

    def context(self, ctx: ServerRequestContext[Any, Any], params: Any = None) -> Context:
        return Context(ctx, params, events=self.events, registry=self.registry)

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:  # the SDK's ``tools/call`` handler
        context = self.context(ctx, params)
        try:
            return await self.dispatch(params.name, dict(params.arguments or {}), context)
        except (UnknownTool, Forbidden) as exc:
            raise self.protocol_error(params.name, exc) from None

    def protocol_error(self, name: str, exc: UnknownTool | Forbidden) -> MCPError:
        if isinstance(exc, Forbidden) and not self.policy.hide_unauthorized:
            return exc.error()  # what discovery hides, a call does not reveal
        shown = echoed(name)
        return MCPError(INVALID_PARAMS, f"Unknown tool: {shown}", data={"tool": shown})

    async def dispatch(
        self, name: str, arguments: dict[str, Json], context: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Find, authorize, validate and run one tool call (raises ``UnknownTool`` and
        ``Forbidden``; everything the handler does becomes a result)."""
        binding = self.find(name)
        self.policy.check(context.identity, "tool", name)
        validated = binding.validated(arguments)
        if validated is None and (errors := binding.argument_errors(arguments)):
            return _invalid(name, errors)
        given: Arguments = arguments if validated is None else validated
        try:
            if binding.timeout:
                with anyio.fail_after(binding.timeout):
                    value = await binding.call(given, context)
            else:
                value = await binding.call(given, context)
        except ToolError as exc:
            return tool_error(str(exc))
        except InvalidArguments as exc:
            return _invalid(name, exc.problems)
        except InputRequired as asked:
            return input_required(asked, context)
        except TimeoutError:
            return tool_error(f"Tool {name!r} timed out after {binding.timeout} s")
        except (MCPError, Forbidden, UnknownTool):
            raise
        except NotImplementedError as exc:
            if not is_stub(exc, binding.handler_path):
                return _internal_error(name)
            return tool_error(
                f"Tool {name!r} is not implemented yet: write its handler in {binding.handler_path}"
            )
        except ValidationError:
            logger.exception("tool %s: its handler raised a validation error", name)
            return tool_error(
                f"Tool {name!r} failed: its handler built data that does not validate "
                "(details are in the server log)"
            )
        except Exception:
            return _internal_error(name)
        if isinstance(value, types.InputRequiredResult):  # a meta tool passing one on
            return value
        try:
            result = to_result(value)
        except Exception:  # what the handler returned cannot be sent (NaN, a wrong type)
            if _non_finite(value):  # data, not a bug: the arguments may have overflowed
                logger.error("tool %s returned a NaN or infinite number", name)
                return tool_error(
                    f"Tool {name!r} failed: its result holds a NaN or infinite number, which "
                    "JSON cannot carry"
                )
            return _internal_error(name, "tool %s returned a result that cannot be sent")
        return binding.checked(result)


def _problem(error: Any, hidden: list[str]) -> str:
    """Where, and jsonschema's message (a long value quoted in part, the whole cut at
    PROBLEM_CHARS: a long key in the path, many unknown names); for an unknown argument (or
    member), also the ones known."""
    problem = located(error.absolute_path, _quoted(error, hidden))
    if len(problem) > PROBLEM_CHARS:
        problem = problem[:PROBLEM_CHARS] + "..."
    known = error.schema.get("properties") if error.validator == "additionalProperties" else None
    if error.validator_value is not False or not isinstance(known, dict) or not known:
        return problem
    names = ", ".join(list(known)[:MAX_KNOWN]) + (", ..." if len(known) > MAX_KNOWN else "")
    return f"{problem}; known: {names}"


def _quoted(error: Any, hidden: list[str]) -> str:
    """jsonschema's message, which quotes the invalid value (its ``repr``) whole: a secret
    argument's (``hidden``: its ``repr``, also within the arguments quoted whole) REDACTED, a
    long one by its first ``errors.ECHOED`` characters and its length (a 4 MB string was quoted
    whole): a string's own characters, not those of its ``repr`` (which doubles each backslash)."""
    message = str(error.message)
    for shown in hidden:  # (before a long one is cut: its first characters are the secret's)
        message = message.replace(shown, REDACTED)
    if len(message) <= ECHOED:
        return message
    value = error.instance
    if isinstance(value, str | list | dict) and len(value) > len(message):
        return message  # its repr, longer still, is not in it (and not made: 400,000 keys)
    shown = repr(value)
    if len(shown) <= ECHOED or shown not in message:
        return message
    length = len(value) if isinstance(value, str) else len(shown)
    return message.replace(shown, echoed(shown, length), 1)


def _invalid(name: str, problems: list[str]) -> types.CallToolResult:
    return tool_error(f"Invalid arguments for tool {name!r}: " + "; ".join(problems))


def _internal_error(name: str, log: str = "tool %s failed") -> types.CallToolResult:
    """A handler's bug: its traceback in the server log, nothing of it to the caller."""
    logger.exception(log, name)
    return tool_error(f"Tool {name!r} failed with an internal error (see the server log)")


def _non_finite(value: Any) -> bool:
    try:
        data = value.model_dump(mode="python") if isinstance(value, BaseModel) else value
        json.dumps(data, default=repr)  # a value holding itself raises (the walk would not end)
        return has_non_finite(data)
    except Exception:
        return False
