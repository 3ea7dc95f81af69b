"""The token edit-rate filter: at most ``max`` of the original's tokens edited, or at most ``min_edits`` token
edits (a short text needs them to change at all)."""

import pytest

from cfaug.filters.base import build_filter
from cfaug.judges.base import Candidate


def candidate(old, new):
    return Candidate({"text": old}, {"text": new}, "positive")


PAIRS = [
    ("bad service .", "good service ."),                              # 1 edit of 3 tokens: rate 0.33
    ("great guy and great service .", "bad guy and bad service ."),  # 2 of 6: rate 0.33
    ("a b c", "x y z"),                                              # 3 of 3
    ("the food was bad and the staff was rude .", "the food was good and the staff was rude ."),  # 1 of 10
]


def test_min_edits_lets_short_texts_through():
    f = build_filter({"@filters": "max-edit-rate", "max": 0.3, "min_edits": 2})
    assert f.name == "edit_rate"
    batch = [candidate(a, b) for a, b in PAIRS]
    assert f.check(batch) == [True, True, False, True]
    # the rate is kept as a score, whatever the verdict
    assert [c.scores["edit_rate"] for c in batch] == pytest.approx([1 / 3, 2 / 6, 1.0, 0.1])


def test_without_min_edits_the_rate_alone_decides():
    for spec in ({"@filters": "max-edit-rate", "max": 0.3, "min_edits": 0}, {"@filters": "max-edit-rate", "max": 0.3}):
        f = build_filter(spec)
        assert f.check([candidate(a, b) for a, b in PAIRS]) == [False, False, False, True]


def test_min_edits_counts_token_edits():
    f = build_filter({"@filters": "max-edit-rate", "max": 0.3, "min_edits": 1})
    one, two = candidate(*PAIRS[0]), candidate(*PAIRS[1])
    assert f.check([one, two]) == [True, False]  # 1 edit is within one, 2 are not
    # the allowance counts the token edits themselves: an empty original rewritten to six words is six edits
    empty = candidate("", "a b c d e f")
    assert f.check([empty]) == [False]
