"""Manner adverbs grading a participle ("well written", "superbly-crafted", "ill-conceived") are flipped on
the adverb alone; real review sentences, tagged by the bundled pipeline."""

import pytest

from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.manner import is_participle, manner_edit
from cfaug.editing.text import apply_edits, tokenize
from cfaug.nlp import load_pipeline

LEX = load_lexicon()


def flip(text, word):
    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    edit = manner_edit(tokens, i, tags, LEX)
    return None if edit is None else apply_edits(text, [edit])


@pytest.mark.parametrize("text,word,expected", [
    ("The script is well written and the cast is fine.", "well", "The script is poorly written and the cast is fine."),
    ("Well made, and it shows.", "Well", "Poorly made, and it shows."),
    ("A slight film, but a superbly-crafted one.", "superbly-crafted", "A slight film, but a poorly-crafted one."),
    ("It is a well-directed thriller.", "well-directed", "It is a poorly-directed thriller."),
    ("An ill-conceived remake.", "ill-conceived", "An well-conceived remake."),  # the method agrees the article
    ("The dialogue is badly-written.", "badly-written", "The dialogue is well-written."),
])
def test_the_adverb_alone_is_flipped(text, word, expected):
    assert flip(text, word) == expected


@pytest.mark.parametrize("text,word", [
    ("Well, I liked it anyway.", "Well"),                 # a discourse marker
    ("The music is good as well.", "well"),               # "as well"
    ("He is well known for his westerns.", "well"),       # not a verdict on quality
    ("A well-meaning but dull drama.", "well-meaning"),   # not a past participle
    ("She sings well.", "well"),                          # no participle follows
    ("A cold-blooded killer.", "cold-blooded"),           # the first part is no manner adverb
    ("A well-deserved award.", "well-deserved"),          # its opposite is "undeserved", not "poorly"
])
def test_other_uses_are_left_alone(text, word):
    assert flip(text, word) is None


def test_participles():
    assert all(is_participle(w) for w in ("written", "crafted", "done", "made", "thought"))
    assert not any(is_participle(w) for w in ("meaning", "good", "film"))


def test_method_flips_the_adverb_unless_it_is_negated(tiny_auto_cad):
    from cfaug.data.records import Record, WorkItem

    m, task = tiny_auto_cad()
    items = [WorkItem(Record("a", {"text": "A great cast, a well written script and a superbly-crafted plot."},
                             "positive"), "negative"),
             WorkItem(Record("b", {"text": "A great cast, though the script is not well written."}, "positive"),
                      "negative"),
             WorkItem(Record("c", {"text": "An ill-conceived remake with an awful cast."}, "negative"), "positive")]
    a, b, c = (cfs[0].fields["text"] for cfs in m.generate(items, task))
    assert "poorly written script" in a and "poorly-crafted plot" in a
    assert "not well written" in b  # the negated phrase already carries the target polarity
    assert c.startswith("A well-conceived remake")  # the article agrees


@pytest.mark.parametrize("text,word,polarity,expected", [
    ("This is one of my favorite films.", "favorite", "positive", "This is one of my least favorite films."),
    ("The service here sucked.", "sucked", "negative", "The service here rocked."),
    ("The wifi sucks!", "sucks", "negative", "The wifi rocks!"),
    ("A new cult favorite that should last.", "favorite", "positive", None),  # a noun: the proposer's
])
def test_a_word_without_a_lexicon_opposite_takes_its_fixed_one(text, word, polarity, expected):
    from cfaug.editing.manner import own_flip

    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    edit = own_flip(text, tokens, i, tags, LEX, polarity)
    assert (None if edit is None else apply_edits(text, [edit])) == expected


def test_a_prefix_that_changes_the_sense_is_no_opposite():
    from cfaug.proposers.replacements import prefix_antonyms, prefix_forms

    assert prefix_antonyms("considerate", "inconsiderate") and prefix_antonyms("fortunately", "unfortunately")
    assert "uneasily" not in prefix_forms("easily") and prefix_forms("uneasy") == set()  # uneasy is anxious
