"""A client sending made-up names cannot grow what telemetry keeps: 100 ``tools/call``s,
``prompts/get``s and ``resources/read``s of random names and URIs, and requests of random
methods, against a running server exporting spans to a real OTLP/HTTP receiver. ``GET
/metrics`` keeps a handful of label sets naming none of them, and the SDK's SERVER spans
are named ``tools/call``, ``prompts/get``, ``resources/read`` or ``_OTHER``, never after
what the client sent; a tool the server has still names its span and label."""

from __future__ import annotations

import os
import signal

import httpx2
import otelkit as k
import pytest

from mcpgen.runtime.testing import free_port

pytestmark = pytest.mark.timeout(120)
AUTHORIZED = {"content-type": "application/json", "accept": k.ACCEPT}
AUTHORIZED["Authorization"] = f"Bearer {k.KEY}"


def test_random_names_make_no_new_label_sets_or_span_names() -> None:
    with k.receiver() as receiver, k.upstream() as upstream:
        port = free_port()
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_METRICS_EXPORTER": "none",
            "SHOP_API_BASE_URL": upstream.url + "/api",
            "SHOP_API_APIKEY": k.UPSTREAM_KEY,
            k.KEYS_ENV: k.KEY,
        }
        process = k.start(
            k.shop_spec(auth="bearer"), ["--transport", "http", "--port", str(port)], env
        )
        try:
            base = k.wait_ready(process, port)
            url = base + "/mcp"
            with httpx2.Client(timeout=30) as client:
                session = k.handshake_session(client, url, AUTHORIZED)
                known = {"name": "list_items", "arguments": {"limit": 1}}
                assert "result" in k.reply(k.rpc(client, url, "tools/call", known, session))
                sent = []
                for i in range(100):
                    word = "rnd" + os.urandom(6).hex()
                    sent.append(word)
                    calls = [
                        ("tools/call", {"name": word, "arguments": {}}),
                        ("prompts/get", {"name": word}),
                        ("resources/read", {"uri": f"shop://{word}?q={word}", "name": word}),
                        (f"x/{word}", {"name": word}),
                    ]
                    for method, params in calls:
                        answer = k.reply(k.rpc(client, url, method, params, session, i + 2))
                        assert "error" in answer or answer["result"].get("isError"), answer
                metrics = client.get(base + "/metrics", headers=AUTHORIZED).text
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)
    counts = [line for line in metrics.splitlines() if "_count{" in line]
    assert not any(word in metrics for word in sent)
    assert len(counts) < 20, counts  # (method x error type, not x 100 names)
    assert any('gen_ai_tool_name="list_items"' in line for line in counts)
    server = [s for s in k.spans(receiver) if s["kind"] == 2]  # SERVER
    names = {s["name"] for s in server}
    assert {"tools/call", "prompts/get", "resources/read", "_OTHER"} <= names
    assert "tools/call list_items" in names
    for span in server:  # (a read's span says which URI it read: an attribute, no name)
        shown = {k: v for k, v in span["attributes"].items() if k != "mcp.resource.uri"}
        assert not any(word in str(shown) or word in span["name"] for word in sent), span
