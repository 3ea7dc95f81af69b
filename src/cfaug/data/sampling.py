"""Which rows ``--limit N`` takes, in ``cfaug augment`` and ``cfaug compare`` alike: a seeded sample balanced
by label (:data:`SAMPLE_RULE`).

Every row gets a place in one order (:func:`sample_order`): within each label, rows are ordered by a hash of
the seed and the row's id; the labels then take turns, in sorted order, one row each, a label whose rows are
used up dropping out. The first N rows of that order are the sample, kept in input order. So:

- the same seed and the same file give the same rows, whichever command takes them;
- the labels are represented equally while each has rows left (with N not a multiple of the number of
  labels, the labels first in sorted order get one row more);
- a larger N takes every row a smaller one took and more (a run directory resumed with a larger
  ``--limit`` only adds items);
- where the order of the file says nothing (a file sorted by label), the sample is still balanced.

Tasks whose labels are open (aspect sentiment triplets: every sentence its own label) are not balanced:
their rows are taken in the seeded hash order alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

#: the rule, as the summaries say it
SAMPLE_RULE = "a seeded sample balanced by label"
#: the rule for tasks whose labels are open (no fixed label set to balance)
SAMPLE_RULE_OPEN = "a seeded sample"


def _rank(seed: int, key: str) -> bytes:
    return hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()


def sample_order(keys: Sequence[str], groups: Sequence[str | None] | None, seed: int) -> list[int]:
    """Every position of ``keys`` (the rows' ids) in the order ``--limit`` takes them: within each group
    (the rows' labels; None: one group) by the seeded hash of the key, position breaking ties; the groups,
    in sorted order, then take turns."""
    if groups is not None and len(groups) != len(keys):
        raise ValueError(f"{len(keys)} keys but {len(groups)} groups")
    by_group: dict[str, list[int]] = {}
    for i in range(len(keys)):
        g = "" if groups is None or groups[i] is None else str(groups[i])
        by_group.setdefault(g, []).append(i)
    queues = [sorted(by_group[g], key=lambda i: (_rank(seed, str(keys[i])), i)) for g in sorted(by_group)]
    order: list[int] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        order += [q[turn] for q in queues if turn < len(q)]
    return order


def sample_positions(keys: Sequence[str], groups: Sequence[str | None] | None, limit: int | None,
                     seed: int) -> list[int]:
    """The positions ``--limit limit`` takes (the first ``limit`` of :func:`sample_order`), sorted so that the
    sample keeps the input order; every position when ``limit`` is None or not below the number of rows."""
    n = len(keys)
    if limit is None or limit >= n:
        return list(range(n))
    if limit < 0:
        raise ValueError(f"limit must not be negative, got {limit}")
    return sorted(sample_order(keys, groups, seed)[:limit])


def describe_taken(taken: int, of: int, seed: int, balanced: bool = True) -> str:
    """What the summaries say of the rows a run took, e.g. ``20 of 60: a seeded sample balanced by label
    (seed 0)``, or ``all 60`` when nothing was left out."""
    if taken >= of:
        return f"all {of}"
    return f"{taken} of {of}: {SAMPLE_RULE if balanced else SAMPLE_RULE_OPEN} (seed {seed})"
