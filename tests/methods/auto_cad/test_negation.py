"""Negation both ways: RM-CT removes a negator (tested with the method); REP-CT can insert one."""

import pytest

from cfaug.methods.auto_cad.negation import negate_predicate
from cfaug.methods.auto_cad.text import apply_edits, tokenize
from cfaug.nlp import load_pipeline


def negate(text, word):
    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    edit = negate_predicate(tokens, i, tags)
    return None if edit is None else apply_edits(text, [edit])


@pytest.mark.parametrize("text,word,expected", [
    ("The film is worth seeing.", "worth", "The film is not worth seeing."),
    ("It's a great film.", "great", "It's not a great film."),
    ("The acting was really terrible.", "terrible", "The acting was not really terrible."),
    ("I loved it.", "loved", "I did not love it."),
    ("She hates the ending.", "hates", "She does not hate the ending."),
    ("They enjoy every scene.", "enjoy", "They do not enjoy every scene."),
    ("You will love it.", "love", "You will not love it."),
])
def test_a_negator_goes_after_the_auxiliary_or_with_do(text, word, expected):
    assert negate(text, word) == expected


@pytest.mark.parametrize("text,word", [
    ("It was not good.", "good"),          # already negated
    ("A great film.", "great"),            # no predicate to negate
    ("The great cast saves it.", "great"),  # the word is inside the subject
])
def test_nothing_to_negate(text, word):
    assert negate(text, word) is None


def test_method_chooses_negation_and_never_negates_twice(tmp_path):
    from cfaug.data.records import Record, WorkItem
    from cfaug.data.tasks import make_task
    from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
    from cfaug.training.context import FitContext, StageContext

    task = make_task("sentiment")
    pos = ["This was a great film.", "I loved the cast.", "A wonderful, moving story.", "The ending is brilliant."]
    neg = ["This was an awful film.", "I hated the cast.", "A boring, dull story.", "The ending is terrible."]
    records = [Record(f"p{i}", {"text": t}, "positive") for i, t in enumerate(pos)]
    records += [Record(f"n{i}", {"text": t}, "negative") for i, t in enumerate(neg)]
    m = AutoCAD(AutoCADConfig(negation_weight=50.0, require_flip=False, folds=2), seed=0)
    m.fit(records, task, FitContext(artifact_dir=tmp_path, progress=False))
    m.load(tmp_path, task, StageContext(progress=False))
    item = WorkItem(Record("x", {"text": "This was an awful waste of time and I hated it."}, "negative"), "positive")
    [cfs] = m.generate([item], task)
    rep = next(cf for cf in cfs if cf.meta["variant"] == "rep-ct")
    kinds = [e["kind"] for e in rep.meta["edits"]]
    assert "negation-insert" in kinds
    text = rep.fields["text"]
    assert text.count(" not ") == kinds.count("negation-insert") and "not not" not in text
    assert "excellent waste" not in text and "awful" in text  # a negated stretch keeps its words
