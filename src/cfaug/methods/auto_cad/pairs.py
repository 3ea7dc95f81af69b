"""Substitution pairs mined from paired counterfactual data (an original and its human rewrite).

Given rows of (text, label, pair id), each pair's word-level diff yields one-word substitutions
("boring" -> "fascinating"); counts of such substitutions become a prior for auto-CAD replacements.
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
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for members in groups.values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a[label_col] == b[label_col]:
                    continue
                for x, y in _substitutions(str(a[text_col]), str(b[text_col])):
                    table[x][y] += 1
                    table[y][x] += 1
    return dict(table)


def _substitutions(a: str, b: str) -> list[tuple[str, str]]:
    ta = [t.lower for t in tokenize(a) if t.is_word]
    tb = [t.lower for t in tokenize(b) if t.is_word]
    out = []
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "replace" and i2 - i1 == 1 and j2 - j1 == 1:
            out.append((ta[i1], tb[j1]))
    return out
