"""Word and punctuation tokens and the token edit distance."""

import pytest

from cfaug.nlp import tokens
from cfaug.nlp.tokens import levenshtein, token_edit_rate, tokenize


def test_tokenize_lowercases_and_splits_punctuation():
    assert tokenize("It isn't GREAT, is it?") == ["it", "isn't", "great", ",", "is", "it", "?"]


@pytest.mark.parametrize("a,b,d", [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2),
                                   ("abcd", "acbd", 2)])
def test_levenshtein_by_hand(a, b, d, monkeypatch):
    assert levenshtein(list(a), list(b)) == d
    monkeypatch.setattr(tokens, "_fast_levenshtein", None)  # the pure-Python fallback agrees
    assert levenshtein(list(a), list(b)) == d
    assert levenshtein(list(b), list(a)) == d


def test_token_edit_rate():
    assert token_edit_rate("a great film .", "a great film .") == 0.0
    assert token_edit_rate("a great film .", "a terrible film .") == 0.25
    assert token_edit_rate("a great film .", "a film .") == 0.25
    assert token_edit_rate("A great film.", "An awful, awful movie!") == 1.5  # 4 swaps + 2 insertions over 4
    assert token_edit_rate("", "") == 0.0 and token_edit_rate("", "new") == 1.0
