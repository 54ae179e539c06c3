"""A local OAuth authorization server and a local upstream API, served on 127.0.0.1.

``AuthServer`` issues the MCP access tokens the tests present (``issue``), publishes its
JWKS, and answers its token endpoint with the client-credentials and the RFC 8693
token-exchange grants. It counts exchanges per subject and can be told to refuse, to
fail, to be slow, to revoke a subject, or to misbehave (echo the subject token, redirect).

``Upstream`` logs every request it receives (method, path, query, every header) and
checks bearer tokens against the authorization server when asked to.

Both run under uvicorn in a thread, so the code under test talks to them over real TCP.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 in a thread; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _json(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def _oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    return _json({"error": error, "error_description": description}, status)


@dataclass
class AuthServer:
    """The authorization server (it issues the inbound MCP tokens and exchanges them)."""

    clients: dict[str, str] = field(default_factory=lambda: {"mcp-server": "server-secret"})
    mcp_audience: str = "https://mcp.test"
    upstream_audiences: set[str] = field(default_factory=lambda: {"https://api.test"})
    lifetime: int = 300
    """Lifetime in seconds of the tokens the token endpoint issues."""
    delay: float = 0.0
    """Seconds every token request waits before answering (to make calls overlap)."""
    refuse: str | None = None
    """An OAuth error code (e.g. ``invalid_grant``) every exchange is refused with."""
    fail_status: int | None = None
    """An HTTP status every token request answers with (a broken AS)."""
    echo: bool = False
    """Answer an exchange with the subject token itself (a misbehaving AS)."""
    redirect_to: str | None = None
    """Answer every token request with a 307 to this URL."""
    oversize: int = 0
    """Pad every issued token's answer to this many bytes (a hostile AS)."""
    chunked: bool = False
    """Send the padded answer without a Content-Length."""
    issuer: str = "https://as.test"
    url: str = ""
    exchanges: Counter[str] = field(default_factory=Counter)
    grants: Counter[str] = field(default_factory=Counter)
    requests: list[dict[str, str]] = field(default_factory=list)
    revoked_subjects: set[str] = field(default_factory=set)
    revoked_tokens: set[str] = field(default_factory=set)
    _issued: dict[str, set[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._kid = uuid.uuid4().hex[:8]
        self._lock = threading.Lock()

    # -- what tests use --------------------------------------------------------------

    @property
    def token_url(self) -> str:
        return self.url + "/token"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    def issue(
        self,
        subject: str,
        audience: str | None = None,
        lifetime: int | None = None,
        **claims: Any,
    ) -> str:
        """A signed JWT access token (by default one for the MCP server)."""
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience or self.mcp_audience,
            "iat": now,
            "exp": now + (lifetime if lifetime is not None else self.lifetime),
            "jti": uuid.uuid4().hex,
            **claims,
        }
        return jwt.encode(body, self._key, algorithm="RS256", headers={"kid": self._kid})

    def verify(self, token: str, audience: str) -> dict[str, Any]:
        """The claims of a token this server issued for ``audience`` (raises if not valid)."""
        claims: dict[str, Any] = jwt.decode(
            token,
            self._key.public_key(),
            algorithms=["RS256"],
            audience=audience,
            issuer=self.issuer,
        )
        if claims.get("jti") in self.revoked_tokens:
            raise jwt.InvalidTokenError("revoked")
        return claims

    def revoke(self, subject: str) -> None:
        """Refuse further exchanges for ``subject`` and void the tokens issued to them."""
        with self._lock:
            self.revoked_subjects.add(subject)
            self.revoked_tokens.update(self._issued.get(subject, ()))

    # -- the app ---------------------------------------------------------------------

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/jwks", self._jwks),
                Route("/token", self._token, methods=["POST"]),
            ]
        )

    @contextmanager
    def running(self) -> Iterator[AuthServer]:
        with serve(self.app()) as url:
            self.url = url
            yield self

    async def _jwks(self, request: Request) -> Response:
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        jwk.update({"kid": self._kid, "use": "sig", "alg": "RS256"})
        return _json({"keys": [jwk]})

    def _client(self, request: Request, form: dict[str, str]) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            if "client_id" in form:
                return None  # two client authentication methods at once
            try:
                pair = base64.b64decode(header[6:]).decode()
            except ValueError:
                return None
            client_id, _, secret = pair.partition(":")
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if client_id and self.clients.get(client_id) == secret:
            return client_id
        return None

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        with self._lock:
            self.requests.append(
                {**form, "_authorization": request.headers.get("authorization", "")}
            )
        if self.delay:
            import anyio

            await anyio.sleep(self.delay)
        if self.redirect_to:
            return RedirectResponse(self.redirect_to, status_code=307)
        if self.fail_status:
            return Response("broken", status_code=self.fail_status)
        client = self._client(request, form)
        if client is None:
            return _oauth_error("invalid_client", "client authentication failed", 401)
        grant = form.get("grant_type", "")
        self.grants[grant] += 1
        if grant == "client_credentials":
            audience = form.get("audience") or sorted(self.upstream_audiences)[0]
            token = self.issue(client, audience=audience, scope=form.get("scope", ""))
            return self._issued_answer(
                {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime}
            )
        if grant != TOKEN_EXCHANGE:
            return _oauth_error("unsupported_grant_type", grant)
        return self._exchange(client, form)

    def _exchange(self, client: str, form: dict[str, str]) -> Response:
        subject_token = form.get("subject_token", "")
        if form.get("subject_token_type") != ACCESS_TOKEN:
            return _oauth_error("invalid_request", "subject_token_type must be access_token")
        try:
            claims = self.verify(subject_token, self.mcp_audience)
        except jwt.InvalidTokenError as exc:
            return _oauth_error("invalid_grant", f"subject token rejected: {type(exc).__name__}")
        subject = str(claims["sub"])
        audience = form.get("audience") or form.get("resource") or ""
        if audience not in self.upstream_audiences:
            return _oauth_error("invalid_target", "unknown audience")
        if self.refuse:
            return _oauth_error(self.refuse, "exchange refused by policy")
        if subject in self.revoked_subjects:
            return _oauth_error("invalid_grant", "the subject's grant was revoked")
        with self._lock:
            self.exchanges[subject] += 1
        if self.echo:
            token = subject_token
        else:
            token = self.issue(
                subject,
                audience=audience,
                scope=form.get("scope", ""),
                act={"sub": client},
            )
            jti = jwt.decode(token, options={"verify_signature": False})["jti"]
            with self._lock:
                self._issued.setdefault(subject, set()).add(jti)
        return self._issued_answer(
            {
                "access_token": token,
                "issued_token_type": ACCESS_TOKEN,
                "token_type": "Bearer",
                "expires_in": self.lifetime,
            }
        )

    def _issued_answer(self, body: dict[str, Any]) -> Response:
        if not self.oversize:
            return _json(body)
        start = json.dumps({**body, "pad": ""}).encode()[:-2]
        whole = start + b"x" * (self.oversize - len(start) - 2) + b'"}'
        if not self.chunked:
            return Response(whole, media_type="application/json")
        pieces = (whole[i : i + 65536] for i in range(0, len(whole), 65536))
        return StreamingResponse(pieces, media_type="application/json")


@dataclass
class Received:
    """One request the upstream received."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def all(self, name: str) -> list[str]:
        """Every value of one header, in order (a repeated header shows up twice)."""
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class Upstream:
    """The wrapped API: logs every request; checks bearer tokens when ``auth`` is given
    (everywhere but under ``open_paths``)."""

    auth: AuthServer | None = None
    audience: str = "https://api.test"
    url: str = ""
    received: list[Received] = field(default_factory=list)
    open_paths: tuple[str, ...] = ()
    """Path prefixes served without a bearer token (a token sent there is still checked)."""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(
                    "/{path:path}",
                    self._any,
                    methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"],
                )
            ]
        )

    @contextmanager
    def running(self) -> Iterator[Upstream]:
        with serve(self.app()) as url:
            self.url = url
            yield self

    async def _any(self, request: Request) -> Response:
        self.received.append(
            Received(
                request.method,
                request.url.path,
                request.url.query,
                [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
            )
        )
        subject = None
        if self.auth is not None:
            header = request.headers.get("authorization", "")
            if not header and request.url.path.startswith(self.open_paths or ("\0",)):
                return _json({"ok": True, "sub": None, "path": request.url.path})
            if not header.startswith("Bearer "):
                return _json({"error": "no bearer token"}, 401)
            try:
                subject = self.auth.verify(header[7:], self.audience)["sub"]
            except jwt.InvalidTokenError as exc:
                return _json({"error": type(exc).__name__}, 401)
        return _json({"ok": True, "sub": subject, "path": request.url.path})
