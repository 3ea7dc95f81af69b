"""Counterfactual pairs from a file: an original text and a rewrite of it that carries another label.

Two layouts are read, from any format :func:`cfaug.data.io.open_rows` reads:

* **pair ids** (the CAD ``*_paired.tsv`` layout): one text per row, with a label and a pair-id column
  (``batch_id``, ``pair_id``, ``pair`` or ``group``); rows sharing a pair id whose labels differ form a
  pair, the first row of the group being the original.
* **original columns** (a ``cfaug augment`` output): each row holds the rewrite and its target label,
  and ``original_<text column>`` / ``original_<label column>`` the original and its label.

Rows that cannot form a pair (no text, no partner, equal labels) are counted in :attr:`PairFile.skipped`
by reason, never dropped silently.

:func:`sentence_pairs` turns document pairs (a review and its rewrite) into pairs of the sentences that were
rewritten, for models that learn from sentences.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.io import DataError, open_rows
from cfaug.data.sentences import split_sentences
from cfaug.quoting import quote_list

PAIR_ID_NAMES = ("batch_id", "pair_id", "pair", "group")
TEXT_NAMES = ("Text", "text", "sentence", "review")
LABEL_NAMES = ("Sentiment", "label", "sentiment", "gold_label")


@dataclass(frozen=True)
class TextPair:
    """An original text and its rewrite, with their labels as written in the file."""

    original: str
    rewrite: str
    original_label: Any
    rewrite_label: Any


@dataclass
class PairFile:
    """The pairs of one file, the layout they were read from, and what was skipped (reason -> rows)."""

    pairs: list[TextPair]
    layout: str
    skipped: Counter[str] = field(default_factory=Counter)


def sentiment_polarity(label: Any) -> str | None:
    """``positive`` or ``negative`` for the usual spellings of a binary sentiment label (``positive``/``pos``/
    ``1``, ``negative``/``neg``/``0``, any case); None for anything else."""
    low = str(label).strip().lower()
    return {"positive": "positive", "pos": "positive", "1": "positive",
            "negative": "negative", "neg": "negative", "0": "negative"}.get(low)


def read_pairs(path: str | Path, *, text_col: str | None = None, label_col: str | None = None,
               pair_col: str | None = None, every_two: bool = False) -> PairFile:
    """Every counterfactual pair of ``path`` (see the module docstring); the columns are detected unless
    given. ``every_two``: in the pair-id layout, every two rows of a group whose labels differ (rewrites of
    one original against each other too), not only the first row against the others. Raises
    :class:`~cfaug.data.io.DataError` naming the file when neither layout fits."""
    name, columns, rows = open_rows(str(path), None)
    text_col = text_col or next((c for c in TEXT_NAMES if c in columns), None)
    label_col = label_col or next((c for c in LABEL_NAMES if c in columns), None)
    if not (text_col and label_col):
        raise DataError(f"{name}: paired data needs text, label and pair-id columns (or original_ columns); "
                        f"found {quote_list(columns)}")
    pair_col = pair_col or next((c for c in PAIR_ID_NAMES if c in columns), None)
    skipped: Counter[str] = Counter()
    if f"original_{text_col}" in columns and f"original_{label_col}" in columns and not pair_col:
        pairs = []
        for _, row in rows:
            if not isinstance(row, dict):
                skipped["unreadable row"] += 1
                continue
            orig, new = row.get(f"original_{text_col}"), row.get(text_col)
            if not orig or not new:
                skipped["empty text"] += 1
            elif row.get(f"original_{label_col}") == row.get(label_col):
                skipped["same label as the original"] += 1
            else:
                pairs.append(TextPair(str(orig), str(new), row[f"original_{label_col}"], row[label_col]))
        return PairFile(pairs, "original columns", skipped)
    if not pair_col:
        raise DataError(f"{name}: paired data needs text, label and pair-id columns ({', '.join(PAIR_ID_NAMES)}) "
                        f"or original_{text_col} and original_{label_col} columns; found {quote_list(columns)}")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, row in rows:
        if not isinstance(row, dict):
            skipped["unreadable row"] += 1
        elif not row.get(text_col) or row.get(pair_col) is None:
            skipped["no text or no pair id"] += 1
        else:
            groups[str(row[pair_col])].append(row)
    pairs = []
    for members in groups.values():
        found = 0
        for i, a in enumerate(members if every_two else members[:1]):
            for b in members[i + 1:]:
                if a[label_col] != b[label_col]:
                    pairs.append(TextPair(str(a[text_col]), str(b[text_col]), a[label_col], b[label_col]))
                    found += 1
        if not found:
            skipped["no partner with another label"] += len(members)
    return PairFile(pairs, f"pair ids ({pair_col})", skipped)


def sentence_pairs(pairs: Sequence[TextPair], *, min_tokens: int = 3, max_tokens: int = 40,
                   min_similarity: float = 0.4) -> tuple[list[TextPair], Counter[str]]:
    """The rewritten sentences of each pair, each with the sentence it replaced.

    Both sides are split into sentences (:func:`~cfaug.data.sentences.split_sentences`, HTML line breaks
    included) and aligned in order (``difflib`` over the lower-cased sentences). Where a run of sentences
    was replaced by a run of the same length, its sentences pair up one to one and keep the pair's labels.
    A pair is kept when both sentences have ``min_tokens`` to ``max_tokens`` whitespace tokens and share at
    least ``min_similarity`` of their words in order (``difflib`` ratio), so a sentence rewritten beyond
    recognition is not taken for an edit of its neighbour. Returns the pairs and the sentences left out by
    reason (``added or removed`` covers runs of unequal length)."""
    out: list[TextPair] = []
    left: Counter[str] = Counter()
    for pair in pairs:
        a, b = split_sentences(str(pair.original), html=True), split_sentences(str(pair.rewrite), html=True)
        matcher = difflib.SequenceMatcher(a=[x.lower() for x in a], b=[x.lower() for x in b], autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if op != "replace" or i2 - i1 != j2 - j1:
                left["added or removed"] += max(i2 - i1, j2 - j1)
                continue
            for x, y in zip(a[i1:i2], b[j1:j2]):
                wx, wy = x.split(), y.split()
                if not all(min_tokens <= len(w) <= max_tokens for w in (wx, wy)):
                    left["too short or too long"] += 1
                elif difflib.SequenceMatcher(a=[w.lower() for w in wx], b=[w.lower() for w in wy],
                                             autojunk=False).ratio() < min_similarity:
                    left["too different"] += 1
                else:
                    out.append(TextPair(x, y, pair.original_label, pair.rewrite_label))
    return out, left
