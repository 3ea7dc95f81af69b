"""A recommendation has no opposite word; it is negated ("Highly recommended" -> "Not recommended")."""

import pytest

from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.negation import negate_recommendation
from cfaug.editing.text import apply_edits, tokenize
from cfaug.nlp import load_pipeline


def negated(text):
    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.lower.startswith("recommend"))
    edit = negate_recommendation(tokens, i, tags, load_lexicon())
    if edit is None:
        return None
    assert text[edit.start:edit.end] == edit.old
    return apply_edits(text, [edit])


@pytest.mark.parametrize("text,expected", [
    ("Weismuller is solid as well. Highly recommended.", "Weismuller is solid as well. Not recommended."),
    ("Highly, hugely recommended!", "Not recommended!"),
    ("Recommended!", "Not recommended!"),
    ("It is highly recommended.", "It is not recommended."),
    ("It is recommended.", "It is not recommended."),
    ("I highly recommend it.", "I do not recommend it."),
    ("For all fans, i recommend this film.", "For all fans, i do not recommend this film."),
    ("I recommended it to my friends.", "I did not recommend it to my friends."),
])
def test_a_recommendation_is_negated(text, expected):
    assert negated(text) == expected


@pytest.mark.parametrize("text", [
    "I would recommend it",    # a promise: taken back by "never" elsewhere
    "I can't recommend it",    # already negated
    "I want to recommend it",  # a base form
    "I highly recommend this wonderful film.",  # "wonderful" flips the clause already
])
def test_no_negation_where_it_does_not_apply(text):
    assert negated(text) is None
