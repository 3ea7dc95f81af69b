"""Triple categories and the shuffle-and-delete step shared by both CoBA paths."""

from __future__ import annotations

import random

from cfaug.methods.coba.categories import NORMAL, PRINCIPAL, SPURIOUS, categorise_words, permute_normal


def test_spurious_wins_over_principal_then_normal():
    cats = categorise_words([["the", "nolan", "film", "is", "great"], ["it", "is", "great"], ["we", "went"]],
                            principal={"great"}, spurious={"nolan"})
    assert cats == [SPURIOUS, PRINCIPAL, NORMAL]


def test_only_normal_units_move_and_others_keep_their_place():
    cats = [PRINCIPAL, NORMAL, SPURIOUS, NORMAL, NORMAL, PRINCIPAL]
    seen = set()
    for seed in range(30):
        order, deleted = permute_normal(cats, random.Random(seed), delete_prob=0.0)
        assert deleted == [] and sorted(order) == list(range(6))
        assert order[0] == 0 and order[2] == 2 and order[5] == 5
        seen.add(tuple(order))
    assert len(seen) > 1  # normal units really are permuted
    assert permute_normal(cats, random.Random(0), 0.0, shuffle=False)[0] == list(range(6))


def test_deletion_takes_only_normal_units_and_never_all():
    cats = [PRINCIPAL, NORMAL, NORMAL]
    order, deleted = permute_normal(cats, random.Random(0), delete_prob=1.0)
    assert deleted == [1, 2] and order == [0]
    order, deleted = permute_normal([NORMAL, NORMAL], random.Random(0), delete_prob=1.0)
    assert len(order) == 1 and len(deleted) == 1
