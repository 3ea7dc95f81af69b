"""Removing the determiner "no" keeps its noun phrase English: an article, "some" or nothing, by its noun."""

import pytest

from cfaug.editing.negation import determiner_no, negator_removal
from cfaug.editing.text import apply_edits, tokenize
from cfaug.nlp import load_pipeline


def without_no(text, tagged=True):
    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)} if tagged else None
    i = next(k for k, t in enumerate(tokens) if t.lower == "no")
    return apply_edits(text, [negator_removal(tokens, i, text, None, tags)])


@pytest.mark.parametrize("text,expected", [
    ("There is no edge to the story.", "There is an edge to the story."),
    ("There was no look at what made him tick.", "There was a look at what made him tick."),
    ("A story with no real payoff, but a nice look.", "A story with a real payoff, but a nice look."),
    # a degree word of "no" goes with it
    ("Since there is absolutely no interesting idea behind this film.",
     "Since there is an interesting idea behind this film."),
    # a mass noun takes "some", a plural nothing
    ("There is no chemistry between them.", "There is some chemistry between them."),
    ("There are no redeeming qualities.", "There are redeeming qualities."),
    # "no one" is "everyone"; the "anyone" after it stays
    ("No one cares what anyone thinks.", "Everyone cares what anyone thinks."),
])
def test_the_noun_phrase_keeps_the_determiner_it_needs(text, expected):
    assert without_no(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("He is no longer funny.", "He is longer funny."),  # not a determiner: the plain removal
    ("No, it was bad.", "It was bad."),
])
def test_no_that_heads_no_noun_is_removed_as_before(text, expected):
    assert without_no(text) == expected


def test_untagged_the_plain_removal_applies():
    assert without_no("There is no edge to the story.", tagged=False) == "There is edge to the story."
    tokens = tokenize("no longer")
    assert determiner_no(tokens, 0, "no longer", {0: "DT", 3: "NN"}) is None
