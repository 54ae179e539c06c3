"""Lines of Python code: not blank, not a comment, not a docstring (a string standing alone).

    python bench/sloc.py $(find mcpgen -name '*.py' -not -path '*/runtime/*')

Prints the files' lines in all (as ``wc -l``) and their code lines.
"""

from __future__ import annotations

import io
import sys
import tokenize
from pathlib import Path

SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
STARTS = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT}  # a statement's


def counts(source: str) -> tuple[int, int]:
    code: set[int] = set()
    before = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        alone = token.type == tokenize.STRING and before in STARTS  # a docstring
        if token.type not in SKIPPED | {tokenize.ENDMARKER} and not alone:
            code.update(range(token.start[0], token.end[0] + 1))
        before = token.type
    return source.count("\n"), len(code)


if __name__ == "__main__":
    found = [counts(Path(name).read_text()) for name in sys.argv[1:]]
    print(sum(lines for lines, _ in found), sum(code for _, code in found))
