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

from cfaug.methods.auto_cad.text import tokenize

PAIR_ID_NAMES = ("batch_id", "pair_id", "pair", "group")


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
        pa, pb = _polarity(la), _polarity(lb)
        if not pa or not pb or pa == pb:
            continue
        for x, y in _substitutions(a, b, max_words):
            if max(len(x), len(y)) >= 2:
                table[pa][x][y] += 1
                table[pb][y][x] += 1
    return {pol: dict(t) for pol, t in table.items()}


def _polarity(label: Any) -> str | None:
    low = str(label).strip().lower()
    return {"positive": "positive", "pos": "positive", "1": "positive",
            "negative": "negative", "neg": "negative", "0": "negative"}.get(low)


def _pairs(path: str | Path, text_col: str | None, label_col: str | None,
           pair_col: str | None) -> list[tuple[str, str, Any, Any]]:
    """(text a, text b, label a, label b) for every two rows of a pair that differ in label."""
    from cfaug.data.io import open_rows

    name, columns, rows = open_rows(str(path), None)
    text_col = text_col or next((c for c in ("Text", "text", "sentence", "review") if c in columns), None)
    label_col = label_col or next((c for c in ("Sentiment", "label", "sentiment", "gold_label") if c in columns), None)
    pair_col = pair_col or next((c for c in PAIR_ID_NAMES if c in columns), None)
    if not (text_col and label_col and pair_col):
        raise ValueError(f"{name}: paired data needs text, label and pair-id columns (e.g. batch_id); "
                         f"found {', '.join(columns)}")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, row in rows:
        if isinstance(row, dict) and row.get(text_col) and row.get(pair_col) is not None:
            groups[str(row[pair_col])].append(row)
    out = []
    for members in groups.values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a[label_col] != b[label_col]:
                    out.append((str(a[text_col]), str(b[text_col]), a[label_col], b[label_col]))
    return out


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
