"""Taking back a promise or a plan ("we will definitely be back" -> "we will never be back"): the edit REP-CT
makes for a promise term. The predicate negation and negator removal are tested with auto-CAD
(tests/methods/auto_cad/test_negation.py)."""

import pytest

from cfaug.editing.negation import intent_negation
from cfaug.editing.text import apply_edits, tokenize


def first_intent(text, tags=None):
    """The first token index where :func:`intent_negation` finds a promise, with what it returns, or None."""
    tokens = tokenize(text)
    for i in range(len(tokens)):
        found = intent_negation(tokens, i, tags or {})
        if found is not None:
            return i, found
    return None


def taken_back(text, tags=None):
    hit = first_intent(text, tags)
    return None if hit is None else apply_edits(text, [hit[1][1]])


def tags_for(text, **by_word):
    """Penn tags by token start for the words named (``be="VB"``); the other tokens untagged."""
    return {t.start: by_word[t.lower] for t in tokenize(text) if t.lower in by_word}


@pytest.mark.parametrize("text,expected", [
    ("we will definitely be back !", "we will never be back !"),
    ("we 'll be back .", "we 'll never be back ."),  # the tokenizer reads "'ll" as "'" + "ll"
    ("we are definitely going back !", "we are never going back !"),
    ("we'll certainly return", "we'll never return"),  # a contraction the tokenizer keeps whole
    ("i'd recommend it", "i'd never recommend it"),
    ("i would recommend it to anyone .", "i would never recommend it to anyone ."),
    ("we shall return", "we shall never return"),
    ("We will DEFINITELY be back", "We will NEVER be back"),  # "never" takes the adverb's case
    ("Great food. We will surely return!", "Great food. We will never return!"),
])
def test_a_promise_is_taken_back(text, expected):
    assert taken_back(text) == expected


def test_the_phrase_and_the_edit_of_each_form():
    # a certainty adverb becomes "never": the phrase is auxiliary, adverb, verb
    i, (phrase, edit) = first_intent("we will definitely be back !")
    assert (i, phrase) == (1, (1, 2, 3))
    assert (edit.start, edit.end, edit.new, edit.old, edit.kind) == (8, 18, "never", "definitely", "replace")
    # without one, "never" is inserted after the auxiliary: the phrase is auxiliary and verb
    i, (phrase, edit) = first_intent("i would recommend it to anyone .")
    assert (i, phrase) == (1, (1, 2))
    assert (edit.start, edit.end, edit.new, edit.old, edit.kind) == (7, 7, " never", "", "negation-insert")
    # the split "'ll": the auxiliary is the "ll" token, and "never" goes after it
    i, (phrase, edit) = first_intent("we 'll be back .")
    assert (i, phrase) == (2, (2, 3)) and (edit.start, edit.new) == (6, " never")
    # a contraction kept whole is the auxiliary itself
    assert first_intent("we'll certainly return")[:1] == (0,)
    assert first_intent("we'll certainly return")[1][0] == (0, 1, 2)


@pytest.mark.parametrize("text,word", [
    ("we will not be back .", "will"),       # already negated
    ("i will n't go", "will"),
    ("we will surely never return", "will"),  # a negator after the certainty adverb
    ("We will. Be back", "will"),             # the verb is in the next sentence
    ("we are eating here", "are"),            # the progressive needs going/coming/heading
    ("the food was definitely good", "was"),  # no intent auxiliary
    ("we will", "will"),                      # nothing after the auxiliary
    ("we will !", "will"),
])
def test_no_promise_to_take_back(text, word):
    tokens = tokenize(text)
    i = next(k for k, t in enumerate(tokens) if t.lower == word)
    assert intent_negation(tokens, i, {}) is None


def test_negated_and_plain_texts_have_no_promise_anywhere():
    assert first_intent("we will not be back .") is None
    assert first_intent("i will n't go") is None
    assert first_intent("i won't go back") is None  # "wo" + "n't": not an intent auxiliary
    assert first_intent("the staff was friendly .") is None


def test_with_tags_the_verb_after_the_auxiliary_must_be_in_its_base_form():
    text = "i would return there"
    # untagged, any word after the auxiliary counts
    assert taken_back(text) == "i would never return there"
    assert taken_back(text, tags_for(text, **{"return": "VB"})) == "i would never return there"
    tokens = tokenize(text)
    assert intent_negation(tokens, 1, tags_for(text, **{"return": "VBP"})) is None
    assert first_intent(text, tags_for(text, **{"return": "VBP"})) is None
    # the verb after a certainty adverb is the one checked
    text = "we will definitely be back !"
    assert taken_back(text, tags_for(text, be="VB", definitely="RB")) == "we will never be back !"
    assert first_intent(text, tags_for(text, be="VBZ", definitely="RB")) is None
    # the progressive is judged by its verb, whatever the tagger says
    text = "we are going back"
    assert taken_back(text, tags_for(text, going="VBG")) == "we are never going back"


@pytest.mark.parametrize("text", [
    "i would have given it more stars",          # a past conditional, not a plan
    "i 'd love to buy the cd",                   # a wish: "i 'd never love to" is no English
    "we will have to wait",                      # an obligation
    "i doubt we 'll see this again",             # already doubted: "never" would say it twice
    "i doubt many of us will see anything like it",
    "if you will watch it",                      # a condition
    "his dad says he 'll take him back",         # a character's plan, not the writer's verdict
    "feelings that would allow us to embrace",   # a relative clause
    "it will make you laugh",                    # "it": the story, not a promise
])
def test_no_promise_where_never_would_not_take_it_back(text):
    assert first_intent(text) is None


def test_a_plural_subject_counts_by_its_tag():
    text = "most viewers will enjoy it"
    assert first_intent(text) is None
    assert taken_back(text, tags_for(text, viewers="NNS", enjoy="VB")) == "most viewers will never enjoy it"
    assert taken_back("kids will enjoy it") == "kids will never enjoy it"
