"""Finding operations by what they do (placeholder ranking; replaced by the ranked index)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class OperationDoc:
    name: str
    title: str
    summary: str
    text: str


@dataclass(frozen=True)
class Hit:
    name: str
    summary: str
    why: list[str]


def documents(spec: dict[str, Any]) -> list[OperationDoc]:
    docs = []
    for entry in spec.get("tools", []):
        if entry.get("http") is None:
            continue
        d = entry["definition"]
        summary = (d.get("description") or d.get("title") or "").split("\n")[0][:200]
        text = " ".join(
            str(part)
            for part in (d["name"], d.get("title"), d.get("description"), entry["http"].get("path"))
            if part
        )
        docs.append(OperationDoc(d["name"], str(d.get("title") or ""), summary, text.lower()))
    return docs


class SearchIndex:
    def __init__(self, docs: list[OperationDoc]) -> None:
        self.docs = docs

    def search(self, query: str, limit: int, allowed: Callable[[str], bool]) -> list[Hit]:
        words = _WORD.findall(query.lower())
        scored = []
        for doc in self.docs:
            if not allowed(doc.name):
                continue
            matched = [w for w in words if w in doc.text]
            if matched or not words:
                scored.append((-len(matched), doc.name, Hit(doc.name, doc.summary, matched)))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in scored[:limit]]
