"""The token edit-rate filter: at most ``max`` of the original's tokens edited, or at most ``min_edits`` token
edits (a short text needs them to change at all); ``max_short`` for texts of at most ``short_tokens`` tokens."""

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


# a short sentence with three opinion words needs three edits: 3 of 9 tokens
SHORT = ("great food , great service and friendly staff .", "awful food , awful service and rude staff .")
# 30 tokens, 12 of them replaced (rate 0.4)
LONG_OLD = " ".join(f"w{i}" for i in range(30))
LONG_NEW = " ".join(f"x{i}" if i < 12 else f"w{i}" for i in range(30))


def test_max_short_allows_more_edits_in_short_texts():
    from cfaug.filters.builtin import MaxEditRate
    from cfaug.nlp.tokens import tokenize

    assert len(tokenize(SHORT[0])) == 9 and len(tokenize(LONG_OLD)) == 30
    assert MaxEditRate(max=0.3).check([candidate(*SHORT)]) == [False]  # rate 0.33
    assert MaxEditRate(max=0.3, max_short=0.5).check([candidate(*SHORT)]) == [True]
    assert MaxEditRate(max=0.3, max_short=0.3).check([candidate(*SHORT)]) == [False]
    # a 30-token text is no short one (short_tokens=20): max decides
    f = MaxEditRate(max=0.3, max_short=0.5)
    assert f.check([candidate(LONG_OLD, LONG_NEW)]) == [False]
    assert f.check([candidate(LONG_OLD, LONG_NEW.replace("x0 x1 x2 x3 x4 x5", "w0 w1 w2 w3 w4 w5"))]) == [True]
    # ... unless short_tokens says it is short
    assert MaxEditRate(max=0.3, max_short=0.5, short_tokens=30).check([candidate(LONG_OLD, LONG_NEW)]) == [True]


def test_max_short_through_the_registry():
    f = build_filter({"@filters": "max-edit-rate", "max": 0.3, "max_short": 0.5, "short_tokens": 10})
    assert (f.max_short, f.short_tokens) == (0.5, 10)
    assert f.check([candidate(*SHORT), candidate(LONG_OLD, LONG_NEW)]) == [True, False]
    assert build_filter({"@filters": "max-edit-rate", "max": 0.3}).max_short is None
