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


REVIEW = "I haven't seen a great film like this.<br /><br />The cast & the story were warm and funny."


@pytest.mark.parametrize("echo", [
    "I haven&#x27;t seen a great film like this.&lt;br /&gt;&lt;br /&gt;The cast &amp; the story were warm and funny.",
    "I haven&amp;#x27;t seen a great film like this. The cast &amp;amp; the story were warm and funny.",
    "I haven't seen a great film like this.The cast & the story were warm and funny.",  # markup dropped
    "I haven't seen a great film like this.\n\nThe cast & the story were warm and funny.",
    "i haven t seen a great film like this  br    br   the cast   the story were warm and funny",
    "i havent seen a great film like thisbr br the cast  the story were warm and funny",
    "i havent seen a great film like this the cast the story were warm and funny",
    "<p>I haven’t seen a great film like this.</p><p>The cast &amp; the story were warm and funny.</p>",
], ids=["entities", "escaped-twice", "markup-dropped", "markup-as-lines", "lower-punctuation-spaced",
        "lower-punctuation-dropped", "lower-markup-dropped", "other-markup"])
def test_an_echo_escaped_stripped_of_markup_or_lower_cased_has_the_same_words(echo):
    assert tokens.same_words(echo, REVIEW) and tokens.same_words(REVIEW, echo)


@pytest.mark.parametrize("rewrite", [
    "I haven't seen a dull film like this.<br /><br />The cast & the story were warm and funny.",
    "I haven&#x27;t seen a great film like this.&lt;br /&gt;The cast &amp; the story were cold and flat.",
    "i have seen a great film like this the cast the story were warm and funny",
])
def test_a_changed_word_is_a_change_whatever_the_escaping(rewrite):
    assert not tokens.same_words(rewrite, REVIEW)
