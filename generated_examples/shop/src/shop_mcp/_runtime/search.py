"""Ranked search over a server's operations: BM25F over weighted fields, with the reasons.

Each operation is an :class:`OperationDoc` (:mod:`.operation_docs`; the words and the
query's widening are :mod:`.search_words`); :class:`SearchIndex` ranks them for a
natural-language query with BM25F (field-weighted BM25): the operation's name, path,
summary, tags, the CRUD verb its HTTP method implies ("action"), its parameters and its
description are separate fields, each with its own weight and length normalisation. Names
and paths are split where a word would end (``reposListForOrg``, ``repos_list_for_org``,
``/repos/{owner}``); words are reduced by a light suffix stemmer (``repositories`` and
``repository``, ``created`` and ``create`` meet); a query word also looks for its
abbreviations (``repo``, ``pr``: full weight), a short list of synonyms (``remove`` for
``delete``, ``my`` for ``authenticated``: lower weight, never above the word's own IDF) and
longer words it begins (``review`` finds ``reviewers``). The score is then multiplied by
how much of the operation's name the query covers ("name precision"): among operations
that match, ``repos_list_for_user`` beats ``packages_..._owned_by_user`` for "list the
repositories of a user". Every hit says why it matched: the query words found per field.

Our own code and not the ``bm25s`` package: bm25s has no fields (weighting means repeating
tokens), no synonyms, prefixes or re-ranking, cannot say which field a word matched in, and
importing it (numpy) costs more than building this index. Recall of each part of the
ranking, against plain BM25F and bm25s, and the start-up costs: ``bench/retrieval.md``.

This module is part of the runtime copied verbatim into every generated server: standard
library only.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import math
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .operation_docs import (
    DESCRIPTION_CHARS,
    FIELDS,
    PARAM_DESCRIPTION_CHARS,
    OperationDoc,
    doc_from_tool,
    docs_from_spec,
    field_texts,
)
from .search_words import ANALYZER_VERSION, Analyzer, Expander, Group

__all__ = [
    "FIELDS",
    "WEIGHTS",
    "Analyzer",
    "Hit",
    "OperationDoc",
    "SearchIndex",
    "doc_from_tool",
    "docs_from_spec",
    "field_texts",
]

# BM25F weights and length normalisation (b) per field; k1 saturates the combined frequency.
WEIGHTS: dict[str, float] = {
    "name": 3.0,
    "path": 1.0,
    "summary": 3.0,
    "tags": 1.5,
    "action": 1.0,
    "params": 0.6,
    "description": 1.0,
}
B: dict[str, float] = {
    "name": 0.5,
    "path": 0.5,
    "summary": 0.5,
    "tags": 0.3,
    "action": 0.0,
    "params": 0.75,
    "description": 0.75,
}
K1 = 1.2
PRECISION = 3.0  # how much the share of the name's words the query says multiplies it
DATA_FORMAT = "mcpgen-search-1"
TF_SCALE = 20000.0  # saturated term frequencies (0 to K1 + 1) kept as 16-bit integers


def _pack(values: array[int]) -> str:
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def _unpack(typecode: str, text: str) -> array[int]:
    values = array(typecode)
    values.frombytes(base64.b64decode(text))
    if sys.byteorder == "big":
        values.byteswap()
    return values


# -- the index ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One ranked result: the operation, its score and the query words each field matched."""

    doc: OperationDoc
    score: float
    matched: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.doc.name

    def why(self) -> str:
        """The reasons in one line: ``name: create, issue; summary: issue``."""
        return "; ".join(f"{f}: {', '.join(words)}" for f, words in self.matched.items())


_Posting = tuple["array[int]", "array[int]"]  # documents, saturated tf times TF_SCALE


class SearchIndex:
    """A BM25F index over operations: built at start-up, or loaded from build-time data."""

    def __init__(
        self,
        docs: Iterable[OperationDoc],
        *,
        weights: Mapping[str, float] | None = None,
        stemming: bool = True,
        synonyms: bool = True,
        prefixes: bool = True,
        precision: float = PRECISION,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """Index ``docs``; with ``data`` (from :meth:`to_data` at build time), load instead.

        ``data`` made for other operations or other settings is ignored (the index is built).
        """
        self.docs: list[OperationDoc] = list(docs)
        self.by_name: dict[str, int] = {d.name: i for i, d in enumerate(self.docs)}
        self.weights = dict(WEIGHTS if weights is None else weights)
        self.analyzer = Analyzer(stemming)
        self.synonyms = synonyms
        self.prefixes = prefixes
        self.precision = precision
        self._names: list[frozenset[str]] = []
        self._postings: dict[str, _Posting] = {}
        self._idf: dict[str, float] = {}
        self._vocabulary: list[str] | None = None
        self.expander = Expander(self.analyzer, synonyms, self._prefixed if prefixes else None)
        self.loaded = data is not None and self._load(data)
        if not self.loaded:
            self._build()
        if not self._names:
            self._names = [frozenset(self.analyzer.terms(d.name)) for d in self.docs]

    def __len__(self) -> int:
        return len(self.docs)

    def get(self, name: str) -> OperationDoc | None:
        i = self.by_name.get(name)
        return None if i is None else self.docs[i]

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        terms = self.analyzer.terms
        fields = [f for f in FIELDS if self.weights.get(f, 0.0) > 0]
        counted: list[list[tuple[Counter[str], int]]] = []
        totals = dict.fromkeys(fields, 0)
        for doc in self.docs:
            texts = field_texts(doc)
            row = []
            for name in fields:
                found = terms(texts[name])
                row.append((Counter(found), len(found)))
                totals[name] += len(found)
            counted.append(row)
        count = len(self.docs)
        averages = [(totals[f] / count if count else 0.0) or 1.0 for f in fields]
        weights = [self.weights[f] for f in fields]
        bs = [B[f] for f in fields]
        postings: dict[str, _Posting] = {}
        for i, row in enumerate(counted):
            combined: dict[str, float] = {}
            for (counts, length), weight, b, average in zip(
                row, weights, bs, averages, strict=True
            ):
                norm = weight / (1.0 - b + b * length / average)
                for term, tf in counts.items():
                    combined[term] = combined.get(term, 0.0) + tf * norm
            for term, weighted in combined.items():
                slot = postings.get(term)
                if slot is None:
                    slot = postings[term] = (array("I"), array("H"))
                slot[0].append(i)
                slot[1].append(round(weighted * (K1 + 1.0) / (K1 + weighted) * TF_SCALE))
        self._postings = postings
        self._set_idf()

    def _set_idf(self) -> None:
        count = len(self.docs)
        self._idf = {
            term: math.log(1.0 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            for term, (docs, _tf) in self._postings.items()
        }

    # -- build-time data -----------------------------------------------------------------

    def _fingerprint(self) -> str:
        """What the postings depend on: the settings and a digest of the operations' texts."""
        settings = [sorted(self.weights.items()), sorted(B.items()), K1, self.analyzer.stemming]
        settings += [DESCRIPTION_CHARS, PARAM_DESCRIPTION_CHARS, ANALYZER_VERSION]
        parts = [DATA_FORMAT, repr(settings)]
        for doc in self.docs:
            parts += (doc.name, doc.method, doc.path, doc.summary, doc.title, *doc.tags)
            parts += (str(len(doc.description)), str(len(doc.parameters)))
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]

    def to_data(self) -> dict[str, Any]:
        """The postings as JSON-ready data, to compute at build time and load at start-up."""
        terms = sorted(self._postings)
        offsets = array("I", [0])
        docs = array("I")
        tfs = array("H")
        for term in terms:
            posting_docs, posting_tfs = self._postings[term]
            docs.extend(posting_docs)
            tfs.extend(posting_tfs)
            offsets.append(len(docs))
        return {
            "format": DATA_FORMAT,
            "fingerprint": self._fingerprint(),
            "terms": " ".join(terms),
            "offsets": _pack(offsets),
            "docs": _pack(docs),
            "tf": _pack(tfs),
        }

    def _load(self, data: Mapping[str, Any]) -> bool:
        if data.get("format") != DATA_FORMAT or data.get("fingerprint") != self._fingerprint():
            return False
        terms = str(data["terms"]).split(" ") if data["terms"] else []
        offsets = _unpack("I", data["offsets"])
        docs = _unpack("I", data["docs"])
        tfs = _unpack("H", data["tf"])
        if len(offsets) != len(terms) + 1 or len(docs) != len(tfs):
            return False
        postings: dict[str, _Posting] = {}
        for at, term in enumerate(terms):
            start, end = offsets[at], offsets[at + 1]
            postings[term] = (docs[start:end], tfs[start:end])
        self._postings = postings
        self._set_idf()
        return True

    def _prefixed(self, term: str) -> list[str]:
        """The indexed terms that start with ``term`` and are longer."""
        if self._vocabulary is None:
            self._vocabulary = sorted(self._postings)
        vocabulary = self._vocabulary
        found = []
        at = bisect.bisect_right(vocabulary, term)
        while at < len(vocabulary) and vocabulary[at].startswith(term):
            found.append(vocabulary[at])
            at += 1
        return found

    # -- querying ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 10,
        allowed: Callable[[str], bool] | None = None,
        explain: bool = True,
    ) -> list[Hit]:
        """The best ``limit`` operations for ``query`` that ``allowed`` admits, best first.

        A query that is exactly an operation's name ranks that operation first.
        """
        groups = self.expander.groups(query)
        scores: dict[int, float] = {}
        for group in groups:
            # A stand-in never counts for more than the word itself would: rare synonyms
            # ("publish" for "make") must not outrank the common word the API uses.
            present = [t for t, _w, _s in group.terms if t in self._idf]
            if not present:
                continue
            main = group.terms[0][0]
            cap = self._idf[main] if main in self._idf else min(self._idf[t] for t in present)
            best: dict[int, float] = {}
            for term, weight, _shown in group.terms:
                posting = self._postings.get(term)
                if posting is None:
                    continue
                factor = weight * min(self._idf[term], cap) / TF_SCALE
                for i, tf in zip(posting[0], posting[1], strict=True):
                    value = factor * tf
                    if value > best.get(i, 0.0):
                        best[i] = value
            for i, value in best.items():
                scores[i] = scores.get(i, 0.0) + value
        if self.precision:
            said = {t for g in groups for t, _w, _s in g.terms}
            names = self._names
            for i in scores:
                words = names[i]
                if words:
                    scores[i] *= 1.0 + self.precision * len(words & said) / len(words)
        exact = self.by_name.get(query.strip())
        if exact is not None:
            scores[exact] = scores.get(exact, 0.0) + 1000.0
        ranked = sorted(scores.items(), key=lambda item: (-item[1], self.docs[item[0]].name))
        hits: list[Hit] = []
        for i, score in ranked:
            doc = self.docs[i]
            if allowed is not None and not allowed(doc.name):
                continue
            hits.append(Hit(doc, round(score, 4), self.explain(doc, groups) if explain else {}))
            if len(hits) >= limit:
                break
        return hits

    def explain(self, doc: OperationDoc, groups: Sequence[Group]) -> dict[str, list[str]]:
        """The query words found in each field of ``doc`` (a stand-in shown as ``word~term``)."""
        matched: dict[str, list[str]] = {}
        for name, text in field_texts(doc).items():
            if self.weights.get(name, 0.0) <= 0 or not text:
                continue
            present = set(self.analyzer.terms(text))
            words = []
            for group in groups:
                best: tuple[float, str] | None = None
                for term, weight, shown in group.terms:
                    if term in present and (best is None or weight > best[0]):
                        best = (weight, shown)
                if best is not None:
                    words.append(group.word if best[0] >= 1.0 else f"{group.word}~{best[1]}")
            if words:
                matched[name] = words
        return matched
