"""Code mode: two tools, ``search_docs`` and ``execute``, in place of one tool per operation.

``search_docs(query)`` ranks the operations (:mod:`.search`) and answers, for the best
few, a Python signature, the shapes of parameters and result, and a line of docs: a few
KB however large the API. ``execute(code)`` runs the model's Python in the Monty sandbox
(``pydantic-monty``: a Rust interpreter in worker processes, no filesystem, network or
environment), where every operation the caller may use is a function of the same name
(``list_`` for ``list``: ``code_docs.python_name``) taking keyword arguments. Calling one suspends the sandbox; the host runs the operation
through ``call`` (the runtime's one dispatch point, which validates the arguments and
checks the caller's scopes) and resumes the sandbox with the result, so credentials and
HTTP never enter it. The answer is ``{"stdout": ..., "result": ...}``: what the code printed
and the value of its last expression.

Limits (:class:`Limits`; a manifest sets them with ``openapi.codeMode``, which reaches
``_spec.json`` as ``codeMode``), and who enforces each:

* ``cpu_seconds`` -- Monty (``max_feed_duration_secs``: execution time in the sandbox,
  not counting time suspended while the host runs an operation); the pool's
  ``request_timeout`` kills a worker that overruns it by ``cpu_seconds + 2``;
* ``timeout`` -- here: the wall clock of the whole run, operations and sleeps included
  (``anyio.fail_after``; the worker is given back or replaced);
* ``memory`` -- Monty (``max_memory``, the sandbox heap); the sandbox is a separate
  process, so even a crash there leaves the server's memory alone;
* ``recursion`` -- Monty (``max_recursion_depth``);
* ``calls`` -- here (operations per run: the one over the limit raises inside the sandbox
  and the run fails even if the code catches it), with Monty's ``max_suspensions`` as a
  backstop;
* ``output`` -- Monty for printing (``CollectString(max_bytes)``), here for the size of
  the result (its JSON);
* ``code`` -- here (bytes of source accepted);
* ``sleep_seconds`` -- Monty (``max_total_sleep_secs``) and here (a sleep reaches the host
  as an OS call, which waits for it within this budget and the timeout);
* ``workers`` -- the pool (``max_processes``); a run waiting for a worker waits within
  its timeout.

Monty cannot bound the wall clock of a run that waits on the host, count operation calls
as such, or size the value a run returns: those three are done here. Files, the
environment and every other OS call are refused (``resume_not_handled``: the sandbox
sees ``PermissionError`` or "not supported"); there is no network module at all.

``pydantic_monty`` (1.4.0; 1.5.0's client and runtime wheels are not published) is an
optional dependency, imported when ``execute`` first runs.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from .code_docs import detail, docs_answer, operation_name, text
from .code_limits import CallerTurns, Limits
from .code_values import (
    argument_problem,
    arguments_problem,
    bounded,
    error,
    expired,
    plain_value,
    result_text,
    result_value,
    surrogate_problem,
    with_output,
    without_absent,
)
from .search import SearchIndex
from .search_words import QUERY_CHARS

if TYPE_CHECKING:
    import pydantic_monty

logger = logging.getLogger(__name__)

Json = Any
Call = Callable[[str, dict[str, Any], Any], Awaitable[types.CallToolResult]]
Allowed = Callable[[str], bool]

ERROR_EXCERPT = 2000  # characters of an operation's error message passed to the code
SEARCH_LIMIT = 8
SEARCH_MAX = 20
SETTLE_SECONDS = 0.2


# -- execute --------------------------------------------------------------------------------


@dataclass
class _Run:
    """One execute: the caller, and what it has used so far."""

    ctx: Any
    allowed: Allowed | None
    known: Allowed | None = None  # the names the code may see (None: every operation)
    calls: int = 0
    over_calls: bool = False
    slept: float = 0.0


class CodeMode:
    """The two tools of code mode over one server's operations.

    ``index`` holds the operations (:class:`~.search.SearchIndex`, built from
    ``_spec.json``); ``call(name, arguments, ctx)`` runs one operation through the
    runtime's dispatch point and answers its ``CallToolResult``; ``allowed(name)``, given
    per request, says whether the caller may use an operation (None: every one).
    """

    def __init__(
        self,
        index: SearchIndex,
        call: Call,
        limits: Limits | None = None,
        *,
        binary_path: str | None = None,
    ) -> None:
        self.index = index
        self.call = call
        self.limits = limits or Limits()
        self.binary_path = binary_path
        self._pool: pydantic_monty.AsyncMonty | None = None
        self._lock = anyio.Lock()
        self._stubs: dict[str, Callable[..., Any]] = {}
        self._turns = CallerTurns(self.limits.runs_per_caller)

    # -- search_docs ---------------------------------------------------------------------

    async def search_docs(
        self, query: str, limit: int = SEARCH_LIMIT, allowed: Allowed | None = None
    ) -> types.CallToolResult:
        limit = max(1, min(int(limit), SEARCH_MAX))
        query = query[:QUERY_CHARS]  # what the search reads, and all the answer repeats
        name = operation_name(self.index, query.strip())
        doc = self.index.get(name)
        if doc is not None and (allowed is None or allowed(name)):
            return types.CallToolResult(content=[text(detail(doc))])
        hits = self.index.search(query, limit, allowed, explain=False)
        return types.CallToolResult(content=[text(docs_answer(hits, query))])

    # -- execute -------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        ctx: Any = None,
        allowed: Allowed | None = None,
        known: Allowed | None = None,
    ) -> types.CallToolResult:
        """Run ``code``; ``allowed(name)`` says which operations the caller may call,
        ``known(name)`` which names exist for it (None: all; a hidden one is a NameError).
        A failure's message is cut to the output limit, however it was made."""
        result = await self._execute(code, _Run(ctx, allowed, known))
        if result.is_error:
            return error(bounded(result_text(result), self.limits.output))
        return result

    async def _execute(self, code: str, run: _Run) -> types.CallToolResult:
        limits = self.limits
        if len(code.encode("utf-8", "replace")) > limits.code:
            return error(f"the code is longer than {limits.code} bytes")
        problem = surrogate_problem(code)
        if problem:
            return error(problem)
        try:
            import pydantic_monty as pm
        except ImportError:
            logger.error("code mode needs the pydantic-monty package")
            return error("this server cannot run code: its sandbox (pydantic-monty) is missing")

        printed = pm.CollectString(max_bytes=limits.output)
        try:
            with anyio.fail_after(limits.timeout):
                async with self._turns.turn(run.ctx):
                    pool = await self._started()
                    async with pool.checkout(
                        script_name="main.py", limits=self._resource_limits()
                    ) as session:
                        value = await self._drive(session, code, printed, run)
        except TimeoutError:
            return error(
                with_output(printed.output, f"TimeoutError: the run took over {limits.timeout:g} s")
            )
        except pm.MontyCrashedError as exc:
            reason = "it ran out of time" if exc.timed_out else "the sandbox process stopped"
            return error(with_output(printed.output, f"the code did not finish: {reason}"))
        except (pm.MontyRuntimeError, pm.MontySyntaxError) as exc:
            message = exc.display("traceback")
            if run.over_calls and "operation calls" not in message:
                message += f"\n(more than {limits.calls} operation calls in one run)"
            if "MemoryError" in message and f"> {limits.output} bytes" in message:
                message += f"\n(print() output is limited to {limits.output} bytes in all)"
            return error(with_output(printed.output, message))
        except pm.MontyError as exc:
            return error(with_output(printed.output, f"{type(exc).__name__}: {exc}"))
        if run.over_calls:
            return error(
                with_output(
                    printed.output,
                    f"RuntimeError: more than {limits.calls} operation calls in one run",
                )
            )
        stdout = printed.output
        too_big = (
            f"the result is over the {limits.output}-byte limit (with what was printed): "
            "return or print less (a slice, or only the fields you need)"
        )
        try:  # measured while it is converted: an aliased value is never copied in full
            result = plain_value(value, limits.output - len(stdout.encode()))
            encoded = json.dumps(result, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:  # TooBig
            return error(with_output(stdout[:2000], str(exc) or too_big))
        if len(encoded.encode()) + len(stdout.encode()) > limits.output:
            return error(with_output(stdout[:2000], too_big))
        data = {"stdout": stdout, "result": result}
        return types.CallToolResult(
            content=[text(json.dumps(data, ensure_ascii=False))], structured_content=data
        )

    def _resource_limits(self) -> pydantic_monty.ResourceLimits:
        limits = self.limits
        return {
            "max_feed_duration_secs": limits.cpu_seconds,
            "max_memory": limits.memory,
            "max_recursion_depth": limits.recursion,
            # name lookups and OS calls suspend too; the call count itself is checked here
            "max_suspensions": 4 * limits.calls + 100,
            "max_total_sleep_secs": limits.sleep_seconds,
        }

    async def _started(self) -> pydantic_monty.AsyncMonty:
        import pydantic_monty as pm

        async with self._lock:
            if self._pool is None:
                pool = pm.AsyncMonty(
                    binary_path=self.binary_path,
                    min_processes=0,
                    max_processes=self.limits.workers,
                    request_timeout=self.limits.cpu_seconds + 2.0,
                    max_checkouts_per_worker=100,
                )
                await pool.__aenter__()
                self._pool = pool
            return self._pool

    async def aclose(self) -> None:
        """Stop the sandbox processes (at server shutdown)."""
        async with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.__aexit__(None, None, None)
            # The pool's threads may still post a wake-up to this loop; one that arrives
            # after the interpreter began to finalize aborts the process (seen with 1.4.0).
            await anyio.sleep(SETTLE_SECONDS)

    async def _drive(
        self,
        session: pydantic_monty.AsyncMontySession,
        code: str,
        printed: pydantic_monty.CollectString,
        run: _Run,
    ) -> Json:
        import pydantic_monty as pm

        snapshot = await session.feed_start(code, print_callback=printed)
        while not isinstance(snapshot, pm.MontyComplete):
            if isinstance(snapshot, pm.AsyncNameLookupSnapshot):
                name = snapshot.variable_name
                if self._known(operation_name(self.index, name), run):
                    snapshot = await snapshot.resume(value=self._stub(name))
                else:
                    snapshot = await snapshot.resume()  # NameError in the sandbox
            elif isinstance(snapshot, pm.AsyncFunctionSnapshot):
                if snapshot.is_os_function:
                    snapshot = await self._os_call(snapshot, run)
                else:
                    answer = await self._operation(
                        str(snapshot.function_name), snapshot.args, snapshot.kwargs, run
                    )
                    snapshot = await snapshot.resume(answer)
            else:  # a future: our functions never return one
                raise pm.MontyError("unexpected await on a pending future") from None
        return snapshot.output

    def _known(self, name: str, run: _Run) -> bool:
        return self.index.get(name) is not None and (run.known is None or run.known(name))

    def _stub(self, name: str) -> Callable[..., Any]:
        """A host function standing for an operation: the sandbox calls it by this name."""
        stub = self._stubs.get(name)
        if stub is None:

            def stub(*args: Any, **kwargs: Any) -> Any:
                raise RuntimeError("called through the sandbox only")

            stub.__name__ = stub.__qualname__ = name
            self._stubs[name] = stub
        return stub

    async def _os_call(
        self, snapshot: pydantic_monty.AsyncFunctionSnapshot, run: _Run
    ) -> pydantic_monty.AsyncSnapshot:
        """Sleeps are served (within the budget); files, environment and the rest are not."""
        if snapshot.function_name in ("time.sleep", "system.async_sleep", "system.sleep"):
            seconds = snapshot.args[0] if snapshot.args else 0
            if not isinstance(seconds, int | float) or seconds < 0 or math.isnan(seconds):
                return await snapshot.resume(
                    {"exc_type": "ValueError", "message": "sleep length must be non-negative"}
                )
            if run.slept + seconds > self.limits.sleep_seconds:
                return await snapshot.resume(
                    {
                        "exc_type": "TimeoutError",
                        "message": f"more than {self.limits.sleep_seconds:g} s of sleep",
                    }
                )
            run.slept += seconds
            await anyio.sleep(seconds)
            return await snapshot.resume({"return_value": None})
        return await snapshot.resume_not_handled()

    async def _operation(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], run: _Run
    ) -> pydantic_monty.ExternalResult:
        name = operation_name(self.index, name)  # (``list_`` in the sandbox)
        doc = self.index.get(name)
        if doc is None or not self._known(name, run):
            return {"exc_type": "NameError", "message": f"name {name!r} is not defined"}
        if run.allowed is not None and not run.allowed(name):
            return {
                "exc_type": "PermissionError",
                "message": f"{name}: this caller may not use this operation",
            }
        if args:
            return {
                "exc_type": "TypeError",
                "message": f"{name}() takes keyword arguments only (see search_docs)",
            }
        problem = argument_problem(doc, kwargs)
        if problem:
            return {"exc_type": "TypeError", "message": f"{name}() {problem}"}
        run.calls += 1
        if run.calls > self.limits.calls:
            run.over_calls = True
            return {
                "exc_type": "RuntimeError",
                "message": f"more than {self.limits.calls} operation calls in one run",
            }
        if expired(run.ctx):
            return {"exc_type": "PermissionError", "message": "the caller's token has expired"}
        unfit = arguments_problem(kwargs, self.limits.arguments)
        if unfit:
            return {"exc_type": "ValueError", "message": f"{name}(): {unfit}"}
        arguments = without_absent(doc, kwargs)
        try:
            result = await self.call(name, arguments, run.ctx)
        except Exception as exc:  # the dispatch point refused or failed: tell the code
            if type(exc).__name__ != "ToolError":
                logger.exception("operation %s failed in code mode", name)
                message = f"{name} failed ({type(exc).__name__})"
            else:
                message = f"{name}: {exc}"
            return {"exc_type": "RuntimeError", "message": message[:ERROR_EXCERPT]}
        if result.is_error:
            message = " ".join(
                c.text for c in result.content if isinstance(c, types.TextContent)
            ).strip()
            return {
                "exc_type": "RuntimeError",
                "message": f"{name} failed: {message or 'error'}"[:ERROR_EXCERPT],
            }
        return {"return_value": result_value(doc, result)}


__all__ = ["CodeMode", "Limits"]
