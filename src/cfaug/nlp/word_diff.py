"""Word-level diff of an original and its counterfactual, for highlighting edits.

Texts are split into words, punctuation marks and whitespace runs; whitespace is kept so the pieces
join back into the exact texts. A line break written as HTML (``<br>``, ``<br/>``, ``<br />``, as in IMDB
reviews) is one piece, so no segment boundary falls inside it and the report can show it as a break. A
replaced span becomes a deletion followed by an insertion.

>>> [(s.op, s.text) for s in word_diff("a good film", "a bad film")]
[('equal', 'a '), ('delete', 'good'), ('insert', 'bad'), ('equal', ' film')]
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_PIECES = re.compile(r"(?i:<br\s*/?>)|\s+|\w+(?:'\w+)*|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Segment:
    """``op`` is ``equal``, ``delete`` (only in the original) or ``insert`` (only in the counterfactual)."""

    op: str
    text: str


def _pieces(text: str) -> list[str]:
    return _PIECES.findall(text)


def word_diff(original: str, counterfactual: str) -> list[Segment]:
    a, b = _pieces(original), _pieces(counterfactual)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[Segment] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if out and out[-1].op == op:
            out[-1] = Segment(op, out[-1].text + text)
        else:
            out.append(Segment(op, text))

    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            add("equal", "".join(a[i1:i2]))
        else:
            add("delete", "".join(a[i1:i2]))
            add("insert", "".join(b[j1:j2]))
    return out


def side_by_side(segments: list[Segment]) -> tuple[list[Segment], list[Segment]]:
    """Split a diff into the original's pieces (equal + delete) and the counterfactual's (equal + insert)."""
    return ([s for s in segments if s.op != "insert"], [s for s in segments if s.op != "delete"])
