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


# -- near copies: only function words differ ------------------------------------------------------------

@pytest.mark.parametrize("a,b", [
    ("they also have lost sight of what good deli food is .", "They have lost sight of what good deli food is."),
    ("a great film", "the great film"),  # an article
    ("it is great", "it was great"),  # a form of be
    ("it 's great !", "It's great!"),  # case, tokenization and punctuation alone
    ("the food was good .", "the food was good ."),
    ("it is good &amp; cheap .", "it is good & cheap ."),  # HTML escaping undone first
])
def test_a_near_copy_differs_only_in_function_words(a, b):
    assert tokens.near_copy(a, b) and tokens.near_copy(b, a)


@pytest.mark.parametrize("a,b", [
    ("do n't go here", "do go here"),  # a negation removed
    ("we will return", "we will never return"),  # a negator added
    ("we will return", "we won't return"),
    ("i would go back .", "i would not go back ."),
    ("i would go back .", "i would nt go back ."),  # a negation spelled without its apostrophe
    ("the food was very good .", "the food was good ."),  # a degree word
    ("the food was good .", "the food was too good ."),
    ("great food", "great food but"),  # "but" can turn a text
    ("the food was good .", "the food was bad ."),  # a content word
    ("I love it", "I hate it"),
    ("the staff were friendly", "the staff were friendly and quick"),
])
def test_a_negation_a_degree_word_or_a_content_word_is_no_near_copy(a, b):
    assert not tokens.near_copy(a, b) and not tokens.near_copy(b, a)


@pytest.mark.parametrize("a,b", [
    ("many people liked it .", "few people liked it ."),
    ("it has a few good songs .", "it has few good songs ."),
])
def test_a_quantifier_that_turns_the_label_is_no_near_copy(a, b):
    assert not tokens.near_copy(a, b)
