"""How an upstream answer becomes a tool result (``runtime.upstream._result``): empty
answers are empty results, errors name the method and the URL requested with credentials
redacted, JSON is structured (wrapped when the output schema wraps it)."""

from __future__ import annotations

import httpx2
import pytest

from mcpgen.runtime import upstream
from mcpgen.runtime.upstream import Request

pytestmark = pytest.mark.timeout(30)
URL = "https://api.example.test/items/7?api_key=s3cret-key&page=2"


def answer(status: int, body: bytes = b"", media: str | None = None) -> httpx2.Response:
    headers = {"content-type": media} if media else {}
    return httpx2.Response(
        status, content=body, headers=headers, request=httpx2.Request("DELETE", URL)
    )


def request() -> Request:
    sent = Request("DELETE", URL)
    sent.parts["query"]["api_key"] = "s3cret-key"
    sent.secret_query.add("api_key")
    return sent


@pytest.mark.parametrize("status", [200, 202, 204])
def test_an_empty_answer_is_an_empty_result(status: int) -> None:
    result = upstream._result(answer(status), {}, request())
    assert result.content == [] and not result.is_error
    assert result.structured_content is None  # not the text "null"


def test_an_error_names_the_method_and_url_without_the_credential() -> None:
    body = b'{"error": "bad key s3cret-key"}'
    result = upstream._result(answer(403, body, "application/json"), {}, request())
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert message.startswith("DELETE https://api.example.test/items/7?")
    assert "HTTP 403" in message and "page=2" in message
    assert "s3cret-key" not in message


def test_json_is_structured_and_wrapped_when_the_schema_wraps_it() -> None:
    plain = upstream._result(answer(200, b'{"id": 7}', "application/json"), {}, request())
    assert plain.structured_content == {"id": 7}
    wrapped = upstream._result(
        answer(200, b"[1, 2]", "application/json"), {"wrapped": True}, request()
    )
    assert wrapped.structured_content == {"result": [1, 2]}
