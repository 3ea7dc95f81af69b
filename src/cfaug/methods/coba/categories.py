"""Triple categories and the shuffle-and-delete step of CoBA, shared by the offline and LLM paths.

A triple is *spurious* when it holds a spurious word (it is kept as it is), else *principal* when it holds a
principal word (it is edited toward the target label), else *normal*: normal triples are permuted among
their own positions and each is deleted with a small probability.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

SPURIOUS, PRINCIPAL, NORMAL = "spurious", "principal", "normal"


def categorise_words(triples: Sequence[Sequence[str]], principal: set[str], spurious: set[str]) -> list[str]:
    """The category of each triple, given its lower-cased words."""
    out = []
    for words in triples:
        if any(w in spurious for w in words):
            out.append(SPURIOUS)
        elif any(w in principal for w in words):
            out.append(PRINCIPAL)
        else:
            out.append(NORMAL)
    return out


def permute_normal(categories: Sequence[str], rng: random.Random, delete_prob: float,
                   shuffle: bool = True) -> tuple[list[int], list[int]]:
    """The new order of the units (normal ones permuted among the normal positions, the others in place)
    without the deleted ones, and the deleted units. Never deletes every unit."""
    normal = [k for k, c in enumerate(categories) if c == NORMAL]
    order = list(range(len(categories)))
    if shuffle and len(normal) > 1:
        moved = normal[:]
        rng.shuffle(moved)
        for slot, k in zip(normal, moved):
            order[slot] = k
    deleted = sorted(k for k in normal if rng.random() < delete_prob)
    if deleted and len(deleted) >= len(categories):
        deleted = deleted[1:]
    gone = set(deleted)
    return [k for k in order if k not in gone], deleted
