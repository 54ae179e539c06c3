"""An HTTP answer read streamed up to a size limit, so that a hostile or broken server
cannot make this process hold more: the wrapped API's answers (``upstream.py``, limit
``<NAME>_API_MAX_RESPONSE_BYTES``) and the authorization server's (token endpoint,
introspection, JWKS; ``MAX_AUTH_ANSWER_BYTES``)."""

from __future__ import annotations

import codecs
from typing import Any

import anyio
import httpx2

MAX_AUTH_ANSWER_BYTES = 1024 * 1024
"""The most read of an authorization server's answer (token, introspection, JWKS)."""
AUTH_ANSWER_SECONDS = 10.0
"""The longest introspection's or the JWKS URL's whole answer may take."""


async def read(response: httpx2.Response, limit: int, refused: Exception) -> httpx2.Response:
    """A streamed response read whole, refused (raising ``refused``, the response closed)
    past ``limit`` bytes. The bytes counted are decoded ones: httpx2 inflates a gzip or
    deflate read in pieces of at most 1 MiB, so a decompression bomb stops at the limit."""
    declared = response.headers.get("content-length", "")
    try:
        if declared.isdigit() and int(declared) > limit:
            raise refused
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise refused
            chunks.append(chunk)
    finally:
        with anyio.CancelScope(shield=True):  # closed even when a deadline cut the read
            await response.aclose()
    kept = [  # as received (a str value that is not ASCII could not be sent again)
        (k, v)
        for k, v in response.headers.raw
        if k.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
    ]  # the body below is already decoded
    answer = httpx2.Response(
        response.status_code, headers=kept, content=b"".join(chunks), request=response.request
    )
    charset = codecs.lookup(answer.encoding or "utf-8").name  # one Python knows
    if charset != "utf-8":
        try:  # a charset that decodes no text (base64, idna, utf-16 without a BOM) or one
            decoder = codecs.getincrementaldecoder(charset)("replace")  # as httpx2's
            decoder.decode(answer.content, True).encode()  # that makes lone surrogates: UTF-8
        except (LookupError, ValueError, TypeError, AssertionError):
            answer.encoding = "utf-8"
    return answer


async def fetch(
    client: httpx2.AsyncClient,
    request: httpx2.Request,
    limit: int,
    refused: Exception,
    seconds: float,
    **options: Any,
) -> httpx2.Response:
    """``request`` sent and its answer ``read`` within ``seconds`` in all (httpx2's timeout
    bounds each read: a server sending a byte at a time held the caller for as long as it
    liked). Past the deadline ``httpx2.ReadTimeout``, an ``HTTPError`` as a slow read is."""
    try:
        with anyio.fail_after(seconds):
            answer = await client.send(request, stream=True, **options)
            return await read(answer, limit, refused)
    except TimeoutError:
        raise httpx2.ReadTimeout(f"no whole answer in {seconds:g} s", request=request) from None
