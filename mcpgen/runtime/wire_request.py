"""The upstream request being assembled (its URL: the base URL's path, then the operation's,
then the base URL's query and the operation's), and its credentials: redacted from URLs
shown, taken out of answers, kept off a URL leaving the API's origin (``Request.leaving``)."""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Collection
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

from .errors import REDACTED, ToolError
from .wire import Encoded, Json, as_list, cookie_value


def credential_forms(value: str) -> tuple[str, ...]:
    """The forms in which a credential sent as ``value`` may come back in an answer:
    itself, its token (``Bearer x``: ``x``), percent-encoded as a query sends it (an API
    echoing the URL it was asked: ``a/b+c=`` as ``a%2Fb%2Bc%3D``), as a cookie sends it
    (``a b;c`` as ``a%20b%3Bc``) and, for HTTP basic, ``user:password`` and the password
    decoded."""
    scheme, _, token = value.partition(" ")
    forms = (value, token, quote(value, safe=""), quote_plus(value), cookie_value(value))
    if scheme.lower() != "basic":
        return forms
    try:
        pair = base64.b64decode(token, validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        return forms
    return *forms, pair, pair.partition(":")[2]


def join(base: str, path: str) -> str:
    """The operation's ``path`` after the path of the ``base`` URL, before its query."""
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def with_query(url: str, query: dict[str, Json] | None) -> str:
    """``url`` with ``query`` (name -> text or list of texts) after the query it has, less
    its pairs of a name ``query`` sets (a base URL's ``api-version``, an operation's too)."""
    pairs = [(key, text) for key, held in (query or {}).items() for text in as_list(held)]
    if not pairs:
        return url
    parts = urlsplit(without(url, {key for key, _ in pairs}))
    kept = [parts.query] if parts.query else []  # a space as %20: "+" is one to forms only
    added = ["=".join(t if isinstance(t, Encoded) else quote(t, safe="") for t in p) for p in pairs]
    return urlunsplit(parts._replace(query="&".join([*kept, *added])))


def without(url: str, names: Collection[str], values: Collection[str] = ()) -> str:
    """``url`` less the query pairs of ``names`` and those that echo one of ``values`` (a
    redirect off the API's origin whose ``Location`` echoes the key: ``?token=...``, ``+``
    kept or read as a space, or inside another value: ``?next=/cb%3Fkey%3D...``)."""
    if not names and not values:
        return url
    parts = urlsplit(url)
    kept = [
        q
        for q in parts.query.split("&")
        if q and unquote_plus(q.partition("=")[0]) not in names and not _echoes(q, values)
    ]
    return urlunsplit(parts._replace(query="&".join(kept)))


def _echoes(pair: str, values: Collection[str]) -> bool:
    """Whether a query pair holds one of ``values``: as its whole value, or (one of at
    least 4 characters, as ``Request.scrub`` finds them) anywhere in it."""
    value, whole = _read(pair.partition("=")[2]), _read(pair)
    return any(
        text in value or (len(text) >= 4 and any(text in form for form in whole))
        for text in values
        if text
    )


def _read(text: str) -> set[str]:
    """What a query's ``text`` may be read as: itself, decoded, ``+`` as a space or not."""
    return {text, unquote(text), unquote_plus(text), unquote(text).replace(" ", "+")}


def redact(url: str, secret_params: set[str]) -> str:
    """``url`` as it may be shown: no user info, credential query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(
        (
            f"{key}={REDACTED}"
            if unquote_plus(key) in secret_params
            else (f"{key}={value}" if sep else key)
        )
        for key, sep, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown_base(base: str, documented: str) -> tuple[str, str, frozenset[str], frozenset[str]]:
    """The base URL set for this deployment (without its query), how it may be shown, the
    query names it adds, and what it holds that the documented one does not (a path segment
    that may be a key, a value of a query name it adds). Beyond the documented base URL (the
    manifest's ``baseUrl``) its path and query are the deployment's and may hold a key
    (``https://host/bot42:K3y/v1?code=KEY``): those are shown ``REDACTED`` (the rest of the
    path is kept: it says which call failed), and taken out of answers as a credential sent
    (``Request.at``)."""
    parts, known = urlsplit(base), urlsplit(documented)
    added = dict(parse_qsl(parts.query, True))
    names = frozenset(added.keys() - {k for k, _ in parse_qsl(known.query, True)})
    path, known_path = parts.path.rstrip("/"), known.path.rstrip("/")
    segments = {s for s in set(path.split("/")) - set(known_path.split("/")) if keylike(s)}
    held = frozenset({*segments, *map(unquote, segments), *(added[name] for name in names)})
    if not segments:
        return "", "", names, held
    real = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    hidden = "/".join(REDACTED if s in segments else s for s in path.split("/"))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return real, urlunsplit((parts.scheme, netloc, hidden, "", "")), names, held


def keylike(segment: str) -> bool:
    """A path segment a deployment adds that may be a key (``bot42:K3y``, a long token),
    not a gateway's word (``petstore``, ``prod``): scrubbed from every answer and refused
    off-origin, a word would be cut out of data and links."""
    return len(segment) >= 16 or (len(segment) >= 8 and any(c.isdigit() for c in segment))


class Request:
    """One upstream request being assembled: its parts and which query names are secret.
    What the caller sent that the document marks secret (``writeOnly``, a password) is
    ``chosen``: hidden from answers as a value (``answers.scrubbed``), never in a key or a
    word; such a query name is shown ``REDACTED`` like a key's (``hidden_query``), such a
    path value too (``hidden_path``: the URL with it, and as it is shown); ``secret_body``:
    the body sends one, not sent again off the API's origin (``redirects.follow``). (Class
    defaults, replaced when set: most requests have none.)"""

    chosen: frozenset[str] = frozenset()
    hidden_query: frozenset[str] = frozenset()
    hidden_path = ("", "")
    secret_body = False

    def __init__(self, method: str, url: str) -> None:
        self.method = method
        self.url = url
        self.parts: dict[str, dict[str, Json]] = {"headers": {}, "query": {}, "cookies": {}}
        self.secret_query: set[str] = set()
        self.secret_headers: set[str] = set()
        self.secrets: set[str] = set()  # every credential value sent (headers, query, cookies)
        self.options: dict[str, Json] = {}
        self.base: tuple[str, str, frozenset[str]] = ("", "", frozenset())  # ``shown_base``
        self.api = ""  # the base URL it is sent to (``at``)

    def at(self, base: str, documented: str, path: str = "", hidden: str = "") -> None:
        """The request made to ``base``, documented as ``documented``: what ``base`` adds
        is shown ``REDACTED`` in URLs and taken out of answers like a credential sent.
        ``hidden``: the ``path`` as shown, a secret parameter's value ``REDACTED``."""
        real, shown, names, held = shown_base(base, documented)
        self.base, self.api = (real, shown, names), base
        for value in held - {""}:
            self.secrets.update(credential_forms(value))
        if hidden:
            home = base.partition("?")[0]
            self.hidden_path = join(real or home, path), join(shown or home, hidden)

    def redact(self, url: str) -> str:
        """``url`` as it may be shown: ``redact``, and the base URL's path as ``shown_base``."""
        for real, shown in (self.hidden_path, self.base[:2]):
            if real and url.startswith(real):
                url = shown + url[len(real) :]
                break
        return redact(url, self.secret_query | self.base[2] | self.hidden_query)

    def shown(self, url: str | None = None) -> str:
        return f"{self.method} {self.redact(url or self.url)}"

    def leaving(self, url: str) -> str:
        """``url`` fit to follow off the API's origin: without a query pair that names or
        holds a credential; refused when one is left elsewhere (``https://cdn/KEY/file``)."""
        url = without(url, self.secret_query, self.secrets | self.chosen)
        if self.scrub(url) != url:
            raise ToolError(
                f"{self.shown()}: the API redirected to another origin with a credential in "
                "the URL; not followed"
            )
        return url

    def scrub(self, text: str) -> str:
        """``text`` (an upstream answer shown to the client) without any credential sent,
        nor a secret the caller chose standing alone (``scrubber``)."""
        return scrubber(self.secrets, self.chosen)(text)


def scrubber(secrets: Collection[str], chosen: Collection[str] = ()) -> Callable[[str], str]:
    """What takes each of ``secrets`` (4 characters or more) out of a text, and each of
    ``chosen`` (4 or more) where it stands alone, no letter, digit or ``_`` either side: a
    password ``name`` is cut out of ``name: x`` or ``pw=name&``, never out of ``username``
    (a random key is no word; a caller's choice may be one). One pattern, longest first,
    made once for all the strings of an answer."""
    kept = sorted((s for s in (*secrets, *chosen) if len(s) >= 4), key=len, reverse=True)
    # the text first, then what is before it (a pattern opening with a look-behind is
    # tried at every position: 16 times slower over an answer's strings)
    texts = [
        re.escape(s) if s in secrets else rf"{re.escape(s)}(?<!\w[\s\S]{{{len(s)}}})(?!\w)"
        for s in kept
    ]
    pattern = re.compile("|".join(texts)) if kept else None
    return str if pattern is None else functools.partial(pattern.sub, REDACTED)
