"""A rewrite in its source's surface form: the case and tokenization of a lower-cased tokenized corpus, prose
for a prose source, a first capital like the source's, no final full stop the source lacks; the words
themselves are never changed."""

from __future__ import annotations

import pytest

from cfaug.nlp.surface import Surface, in_surface_of, surface_of
from cfaug.nlp.tokens import word_sequence


@pytest.mark.parametrize("text,surface", [
    ("it 's great !", Surface(lower=True, tokenized=True)),
    ("do n't go here .", Surface(lower=True, tokenized=True)),
    ("It's great!", Surface(lower=False, tokenized=False)),
    ("I don't know, really.", Surface(lower=False, tokenized=False)),
    ("I loved Paris .", Surface(lower=False, tokenized=True)),
    ("great food", Surface(lower=True, tokenized=None)),  # nothing tells how it is tokenized
    ("Great food", Surface(lower=False, tokenized=None)),
    ("", Surface(lower=False, tokenized=None)),  # no letter: not lower-cased
])
def test_surface_of_tells_case_and_tokenization(text, surface):
    assert surface_of(text) == surface


@pytest.mark.parametrize("source,rewrite,expected", [
    # a lower-cased tokenized corpus: the rewrite lower-cased, punctuation and clitics set off
    ("it 's great !", "It's awful!", "it 's awful !"),
    ("do n't go here .", "Don't skip this place.", "do n't skip this place ."),
    ("they 're great , and we 've been twice .", "They're awful, and we've been twice.",
     "they 're awful , and we 've been twice ."),
    ("i am happy .", "I can't be happy.", "i ca n't be happy ."),  # can't -> ca n't, as the corpus splits it
    # prose: a tokenized rewrite's spaces closed up, the first capital like the source's
    ("It's great!", "it 's awful !", "It's awful!"),
    ("A great film.", "a dull film .", "A dull film."),
    ("I don't like it, sadly.", "i do n't hate it , happily .", "I don't hate it, happily."),
    # a tokenized source that is not lower-cased keeps the rewrite's capitals
    ("I loved Paris .", "I hated Paris.", "I hated Paris ."),
    # the end: no full stop the source lacks; other endings stay
    ("great film", "Awful film.", "awful film"),
    ("Great film", "awful film.", "Awful film"),
    ("A great film!", "a dull film", "A dull film"),
    ("the food was good", "The food was bad...", "the food was bad..."),  # an ellipsis is not a full stop
    ("great film", "Awful film!", "awful film!"),  # the source tells no tokenization: case only
])
def test_in_surface_of(source, rewrite, expected):
    assert in_surface_of(source, rewrite) == expected


@pytest.mark.parametrize("source,rewrite", [
    ("it 's great !", "It's awful!"),
    ("It's great!", "it 's awful !"),
    ("the rooms were clean and the staff was n't rude .", "The rooms were dirty, and the staff wasn't kind."),
    ("A decimal 4.5 rating , not 5.0 .", "A decimal 1.5 rating, not 2.0."),
])
def test_the_words_are_never_changed(source, rewrite):
    """Only case, spaces and a final full stop differ: the rewrite's words (read as same_words reads them, case
    folded and clitics joined back) are the same before and after."""
    assert word_sequence(in_surface_of(source, rewrite)) == word_sequence(rewrite)


def test_a_rewrite_already_in_the_sources_form_is_left_as_it_is():
    assert in_surface_of("it 's great !", "it 's awful !") == "it 's awful !"
    assert in_surface_of("It's great!", "It's awful!") == "It's awful!"
    assert in_surface_of("I loved Paris .", "I hated Paris .") == "I hated Paris ."


def test_numbers_and_inner_punctuation_are_not_split():
    assert in_surface_of("rated 4.5 , good .", "Rated 1.5, bad.") == "rated 1.5 , bad ."




@pytest.mark.parametrize("source", [
    "it 's great , really !",
    "It's great, really!",
    "Great film",
    "The food was\tterrible.<br /><br />Cold and bland.",
    pytest.param("it was great .  the staff were\tkind ."),
    pytest.param("« great » , says everyone . It's a must ."),
    pytest.param("gags , pranks , dares , injuries , etc. . "),
    pytest.param("the U.S. is great ."),
])
def test_a_source_is_already_in_its_own_form(source):
    """What a method edits in place (CoBA offline, whose meta.edits give the changed spans) comes back as it was
    outside the edits: the source in its own surface form is the source."""
    assert in_surface_of(source, source) == source
