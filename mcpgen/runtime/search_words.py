"""Words for ranked search: how texts become terms, and how a query's words are widened.

:class:`Analyzer` splits names and paths where a word would end (``reposListForOrg``,
``repos_list_for_org``, ``/repos/{owner}``), lower-cases, leaves out stop words and
reduces words by a light suffix stemmer. :class:`Expander` turns a query into groups of
terms: each query word with its abbreviations (full weight), its synonyms (lower weight)
and the longer indexed words it begins. Standard library only (part of the runtime).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

SYNONYM_WEIGHT = 0.6
PREFIX_WEIGHT = 0.5  # "review" finds "reviewers", "follow" finds "followers"
PREFIX_MIN = 5
QUERY_CHARS = 4096  # of a query, read: what a caller may ask costs little however long
QUERY_WORDS = 64
ANALYZER_VERSION = 1  # bump when the analyzer changes what it makes of a text

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")

_STOPWORD_TEXT = (
    "a about after again also am an and any are as at be been before being both but by can "
    "could did do does doing each for from further given had has have having he her here "
    "hers him his how i if in into is it its itself just let me mine more most my myself "
    "no nor not now of off on once one only or other our ours out over own please same "
    "she should so some such than that the their theirs them then there these they this "
    "those through to too under until up us very via want was way we were what when "
    "where while whom whose why will with would yet you your yours"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# The caller themself: APIs say "the authenticated user" or "the current user".
SELF_WORDS = frozenset(("i", "me", "my", "mine", "myself", "own"))
SELF_TERMS = (("authenticated", 0.6), ("current", 0.6))

# Phrases of a request that one word of an API says (matched on whole words).
PHRASES: tuple[tuple[str, str], ...] = (
    ("set up", "create"),
    ("sign up", "register"),
    ("logged in", "authenticated"),
    ("log in", "authenticated"),
    ("signed in", "authenticated"),
    ("sign in", "authenticated"),
    ("look up", "get"),
    ("how many", "count"),
    ("change the name", "rename"),
    ("change name", "rename"),
    ("turn on", "enable"),
    ("turn off", "disable"),
    ("switch on", "enable"),
    ("switch off", "disable"),
    ("get rid of", "delete"),
)

# Abbreviations mean the same thing: searched at full weight.
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "repo": ("repository",),
    "repos": ("repository",),
    "org": ("organization",),
    "orgs": ("organization",),
    "pr": ("pull", "request"),
    "prs": ("pull", "request"),
    "config": ("configuration",),
    "info": ("information",),
    "env": ("environment",),
    "app": ("application",),
    "dir": ("directory",),
    "msg": ("message",),
    "stats": ("statistic",),
    "admin": ("administrator",),
    "auth": ("authentication",),
    "ref": ("reference",),
    "doc": ("document",),
    "docs": ("document",),
    "param": ("parameter",),
    "params": ("parameter",),
    "pic": ("picture",),
    "img": ("image",),
    "id": ("identifier",),
    "ci": ("workflow",),
}

# Words that often stand for one another in requests to an API: searched at a lower weight.
# The first five are the verbs of CRUD, which the "action" field derives from the method.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("delete", "remove", "destroy", "erase", "drop", "discard", "purge"),
    (
        "create",
        "add",
        "new",
        "make",
        "insert",
        "register",
        "post",
        "submit",
        "publish",
        "share",
        "leave",
        "put",
        "give",
        "grant",
        "open",
    ),
    ("update", "edit", "change", "modify", "alter", "patch", "set", "close", "rename"),
    ("list", "all", "browse", "enumerate", "every", "show", "which", "see"),
    (
        "get",
        "fetch",
        "retrieve",
        "read",
        "show",
        "view",
        "display",
        "detail",
        "see",
        "look",
        "inspect",
        "check",
        "what",
    ),
    ("search", "find", "query", "lookup", "filter", "mention", "containing"),
    ("user", "account", "person", "people", "profile", "who", "someone", "somebody"),
    ("issue", "bug", "ticket"),
    ("comment", "reply", "remark"),
    ("cancel", "stop", "abort", "terminate", "halt"),
    ("run", "execute", "trigger", "start", "launch", "dispatch"),
    ("download", "fetch", "export"),
    ("upload", "attach", "import"),
    ("permission", "access", "privilege", "right", "role"),
    ("reserve", "reservation", "booking", "book"),
    ("pay", "payment", "charge", "purchase"),
    ("release", "version"),
    ("member", "membership", "teammate", "collaborator", "colleague"),
    ("message", "mail", "email"),
    ("image", "picture", "photo"),
    ("log", "output"),
    ("error", "failure", "fail", "failed"),
    ("setting", "configuration", "preference", "option"),
    ("key", "credential"),
    ("count", "number", "total", "statistic", "traffic"),
    ("ask", "request", "invite"),
    ("remaining", "left", "quota", "limit"),
    ("recent", "latest", "newest", "last"),
    ("convert", "render", "transform", "turn"),
    ("follow", "follower", "following"),
    ("star", "favorite", "stargazer"),
    ("notify", "notification", "alert", "webhook"),
    ("merge", "combine"),
    ("protect", "protection", "restrict"),
    ("language", "programming"),
    ("secret", "token", "password"),
)

# -- words -------------------------------------------------------------------------------


def _stem(word: str) -> str:
    """A light suffix stemmer for English API vocabulary (plural, -ed, -ing, final e)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) >= 5:
        word = _undouble(word[:-2])
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _undouble(word: str) -> str:
    if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]
    return word


class _Terms(dict[str, str]):
    """Word to term, computed on first use (a spec has a few thousand distinct words)."""

    def __init__(self, stemming: bool) -> None:
        super().__init__((word, "") for word in STOPWORDS)
        self.stemming = stemming

    def __missing__(self, word: str) -> str:
        term = _stem(word) if self.stemming else word
        self[word] = term
        return term


class Analyzer:
    """Text to terms: split (camelCase, snake_case, paths), lower-case, stop words, stems."""

    def __init__(self, stemming: bool = True) -> None:
        self.stemming = stemming
        self._terms = _Terms(stemming)

    def term(self, word: str) -> str:
        """The term of one lower-case word ("" for a stop word). A word the specs never
        used is not remembered: queries bring callers' words, without end."""
        term = self._terms.get(word)
        if term is None:
            term = _stem(word) if self.stemming else word
        return term

    def words(self, text: str) -> list[str]:
        """The lower-case words of a text, split where identifiers join words."""
        return " ".join(_WORD.findall(text)).lower().split()

    def terms(self, text: str) -> list[str]:
        """The terms of a text, stop words left out."""
        return [t for t in map(self._terms.__getitem__, self.words(text)) if t]


# -- queries -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One query word and the terms that stand for it, each with its weight."""

    word: str
    terms: tuple[tuple[str, float, str], ...]  # (term, weight, how it is shown)


Prefixed = Callable[[str], list[str]]  # the indexed terms a term begins


class Expander:
    """A query to groups of terms (phrases, the caller themself, abbreviations, synonyms,
    prefixes); ``synonyms=False`` and ``prefixed=None`` turn the widening off."""

    def __init__(self, analyzer: Analyzer, synonyms: bool, prefixed: Prefixed | None) -> None:
        self.analyzer = analyzer
        self.synonyms = synonyms
        self.prefixed = prefixed
        self.table = self._synonym_table() if synonyms else {}
        self.phrases = [
            (re.compile(r"\b" + re.escape(phrase) + r"\b"), word) for phrase, word in PHRASES
        ]

    def _synonym_table(self) -> dict[str, list[tuple[str, float, str]]]:
        term = self.analyzer.term
        table: dict[str, list[tuple[str, float, str]]] = {}
        for short, long in ABBREVIATIONS.items():
            if len(long) == 1:
                table.setdefault(term(short), []).append((term(long[0]), 1.0, long[0]))
                table.setdefault(term(long[0]), []).append((term(short), 1.0, short))
        for group in SYNONYM_GROUPS:
            for word in group:
                for other in group:
                    if other != word and term(other) != term(word) and term(other):
                        table.setdefault(term(word), []).append(
                            (term(other), SYNONYM_WEIGHT, other)
                        )
        return table

    def groups(self, query: str) -> list[Group]:
        analyzer = self.analyzer
        text = query[:QUERY_CHARS].lower()
        if self.synonyms:
            for pattern, word in self.phrases:
                text = pattern.sub(word, text)
        groups: list[Group] = []
        seen: set[str] = set()
        for word in analyzer.words(text)[:QUERY_WORDS]:  # groups are merged pairwise
            if word in SELF_WORDS and self.synonyms:
                if "\x00self" not in seen:
                    seen.add("\x00self")
                    terms = tuple((analyzer.term(t), w, t) for t, w in SELF_TERMS)
                    groups.append(Group(word, terms))
                continue
            if word in STOPWORDS:
                continue
            expansion = ABBREVIATIONS.get(word) if self.synonyms else None
            spelled = [word] if expansion is None or len(expansion) == 1 else list(expansion)
            for part in spelled:
                main = analyzer.term(part)
                if not main or main in seen:
                    continue
                seen.add(main)
                if self._merged(groups, main):
                    continue
                groups.append(Group(part, self._variants(main, part)))
        return groups

    @staticmethod
    def _merged(groups: list[Group], main: str) -> bool:
        """ "make a new": one word said twice counts once, at full weight."""
        for at, earlier in enumerate(groups):
            if any(t == main for t, _w, _s in earlier.terms):
                terms = tuple((t, 1.0 if t == main else w, s) for t, w, s in earlier.terms)
                groups[at] = Group(earlier.word, terms)
                return True
        return False

    def _variants(self, main: str, part: str) -> tuple[tuple[str, float, str], ...]:
        variants: dict[str, tuple[float, str]] = {main: (1.0, part)}
        for other, weight, shown in self.table.get(main, ()):
            if variants.get(other, (0.0, ""))[0] < weight:
                variants[other] = (weight, shown)
        if self.prefixed is not None and len(main) >= PREFIX_MIN:
            for longer in self.prefixed(main):
                if longer not in variants:
                    variants[longer] = (PREFIX_WEIGHT, longer)
        return tuple((t, w, s) for t, (w, s) in variants.items())
