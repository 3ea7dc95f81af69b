"""Substitution pairs mined from paired counterfactual data (an original and its human rewrite).

Given rows of (text, label, pair id), each pair's word-level diff yields one-word substitutions
("boring" -> "fascinating"), whose counts become a prior for auto-CAD replacements, and phrase
substitutions of two or three words ("a must see" -> "a must miss", "highly recommend" -> "cannot
recommend") kept by the direction of the label change, which auto-CAD applies as edits of their own.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from cfaug.data.paired import read_pairs, sentiment_polarity
from cfaug.editing.text import tokenize


def mine_pairs(path: str | Path, *, text_col: str | None = None, label_col: str | None = None,
               pair_col: str | None = None) -> dict[str, Counter[str]]:
    """Return ``{word: Counter(replacement -> count)}`` from a paired counterfactual file.

    The file needs a text column, a label column and a pair-id column (``batch_id`` in CAD data); rows
    sharing a pair id with different labels are diffed. Both directions are recorded.
    """
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for a, b, _, _ in _pairs(path, text_col, label_col, pair_col):
        for (x,), (y,) in _substitutions(a, b, max_words=1):
            table[x][y] += 1
            table[y][x] += 1
    return dict(table)


#: a phrase table: source polarity -> source phrase (lower-cased words) -> target phrases with counts
PhraseTable = dict[str, dict[tuple[str, ...], Counter[tuple[str, ...]]]]


def mine_phrases(path: str | Path, *, text_col: str | None = None, label_col: str | None = None,
                 pair_col: str | None = None, max_words: int = 3) -> PhraseTable:
    """Phrase substitutions (2 to ``max_words`` words on a side, at least two words on one side) from a
    paired file, by direction: ``table["positive"][("must", "see")]`` counts what positive phrases became
    in negative rewrites. Labels are read as polarities (``positive``/``pos``/``1`` and
    ``negative``/``neg``/``0``, any case); other rows are skipped."""
    table: PhraseTable = {"positive": defaultdict(Counter), "negative": defaultdict(Counter)}
    for a, b, la, lb in _pairs(path, text_col, label_col, pair_col):
        pa, pb = sentiment_polarity(la), sentiment_polarity(lb)
        if not pa or not pb or pa == pb:
            continue
        for x, y in _substitutions(a, b, max_words):
            if max(len(x), len(y)) >= 2:
                table[pa][x][y] += 1
                table[pb][y][x] += 1
    return {pol: dict(t) for pol, t in table.items()}


def _pairs(path: str | Path, text_col: str | None, label_col: str | None,
           pair_col: str | None) -> list[tuple[str, str, Any, Any]]:
    """(text a, text b, label a, label b) for every two rows of a pair that differ in label."""
    found = read_pairs(path, text_col=text_col, label_col=label_col, pair_col=pair_col, every_two=True)
    return [(p.original, p.rewrite, p.original_label, p.rewrite_label) for p in found.pairs]


def _substitutions(a: str, b: str, max_words: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Replaced stretches of ``a`` in ``b`` with up to ``max_words`` lower-cased words on each side."""
    ta = [t.lower for t in tokenize(a) if t.is_word]
    tb = [t.lower for t in tokenize(b) if t.is_word]
    out: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "replace" and i2 - i1 <= max_words and j2 - j1 <= max_words:
            out.append((tuple(ta[i1:i2]), tuple(tb[j1:j2])))
    return out
