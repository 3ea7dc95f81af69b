"""Where auto-CAD's causal terms come from on short texts: a positive text's promise ("we will definitely be
back"), which REP-CT takes back, and the words outside the lexicon that C is sensitive to
(``causal_terms=lexicon+classifier``). One method is fitted on twelve short reviews (C reads them alone) and
loaded again with other generation settings."""

from __future__ import annotations

import dataclasses

import pytest

from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.text import tokenize
from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.term_selection import _promise_terms
from cfaug.training.context import FitContext, StageContext

LEX = load_lexicon()

# "unimpressive" is no lexicon word; C learns it from these texts, and its prefix antonym "impressive" is
POSITIVE = ["Impressive fries.", "The dessert was impressive.", "A great place, we loved it.",
            "The staff were friendly.", "Great and impressive.", "We will definitely be back!"]
NEGATIVE = ["Unimpressive fries.", "The dessert was unimpressive.", "An awful place, we hated it.",
            "The staff were rude.", "Awful and unimpressive.", "So unimpressive!"]
PROMISE = "we will definitely be back !"
INCONSIDERATE = "the staff was so inconsiderate ."
UNIMPRESSIVE = "the food was unimpressive ."


@pytest.fixture(scope="module")
def task():
    return make_task("sentiment")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    return tmp_path_factory.mktemp("auto-cad-term-sources")


@pytest.fixture(scope="module")
def method(task, artifacts):
    """auto-CAD with its default term and promise settings (C reads the twelve texts alone, in one fold)."""
    records = [Record(f"p{i}", {"text": t}, "positive") for i, t in enumerate(POSITIVE)]
    records += [Record(f"n{i}", {"text": t}, "negative") for i, t in enumerate(NEGATIVE)]
    m = AutoCAD(AutoCADConfig(require_flip=False, folds=1, classifier_background="none"), seed=0)
    m.fit(records, task, FitContext(artifact_dir=artifacts, progress=False))
    m.load(artifacts, task, StageContext(progress=False))
    yield m
    m.close()


def with_config(method, artifacts, task, **changes):
    """Another instance with generation settings changed, loaded from the same artifacts."""
    other = AutoCAD(dataclasses.replace(method.config, **changes), seed=method.seed)
    other.load(artifacts, task, StageContext(progress=False))
    return other


def generate(method, task, *rows):
    """Each (text, label) row's candidates, for the other label."""
    other = {"positive": "negative", "negative": "positive"}
    return method.generate([WorkItem(Record(f"r{i}", {"text": text}, label), other[label])
                            for i, (text, label) in enumerate(rows)], task)


def rep_ct(cands):
    return [cf for cf in cands if cf.meta["variant"] == "rep-ct"]


def test_defaults_take_back_a_promise_and_read_terms_from_the_classifier():
    c = AutoCADConfig()
    assert c.promises is True and c.causal_terms == "lexicon+classifier" and c.min_edits == 3


def test_a_positive_promise_is_taken_back(method, task):
    [cands] = generate(method, task, (PROMISE, "positive"))
    [cf] = rep_ct(cands)
    assert cf.fields["text"] == "we will never be back !"
    assert cf.meta["edits"] == [{"start": 8, "end": 18, "old": "definitely", "new": "never", "kind": "replace"}]
    assert [(t["term"], t["kind"]) for t in cf.meta["causal_terms"]] == [("will definitely be", "promise")]
    assert cf.meta["passed"] is True
    # RM-CT never removes a promise: it is only taken back
    assert not any(cf.meta["variant"] == "rm-ct" and any(t["kind"] == "promise" for t in cf.meta["causal_terms"])
                   for cf in cands)


def test_without_promises_nothing_is_taken_back(method, artifacts, task):
    [cands] = generate(with_config(method, artifacts, task, promises=False), task, (PROMISE, "positive"))
    assert cands == [] and cands.reason.startswith("no opinion word, negation, promise or rating of the source "
                                                   "polarity, nor an adjective or adverb the classifier weighs")


def test_a_classifier_term_is_no_lexicon_word(method, task):
    assert LEX.polarity("unimpressive") is None and LEX.polarity("inconsiderate") == "negative"
    considerate, unimpressive = generate(method, task, (INCONSIDERATE, "negative"), (UNIMPRESSIVE, "negative"))
    [cf] = rep_ct(unimpressive)
    assert cf.fields["text"] == "the food was impressive ."
    [term] = cf.meta["causal_terms"]
    assert (term["term"], term["kind"], term["source"]) == ("unimpressive", "word", "classifier")
    [cf] = rep_ct(considerate)
    assert [t["term"] for t in cf.meta["causal_terms"]] == ["inconsiderate"]
    assert "source" not in cf.meta["causal_terms"][0]  # a lexicon word
    assert "inconsiderate" not in cf.fields["text"]
    for cf in considerate + unimpressive:
        for t in cf.meta["causal_terms"]:
            if t.get("source") == "classifier":
                assert LEX.polarity(t["term"]) is None


def test_lexicon_terms_only(method, artifacts, task):
    lexicon_only = with_config(method, artifacts, task, causal_terms="lexicon")
    considerate, unimpressive, both = generate(lexicon_only, task, (INCONSIDERATE, "negative"),
                                              (UNIMPRESSIVE, "negative"),
                                              ("the food was unimpressive and the staff was rude .", "negative"))
    assert unimpressive == []  # no lexicon word to edit
    [cf] = rep_ct(both)
    assert cf.fields["text"] == "the food was unimpressive and the staff was friendly ."
    assert [t["term"] for t in cf.meta["causal_terms"]] == ["rude"]
    for cf in considerate + both:
        assert all("source" not in t for t in cf.meta["causal_terms"])


# ------------------------------------------------------------------------------------------ promise terms


def test_promise_terms_of_an_untagged_text():
    tokens = tokenize(PROMISE)
    [term] = _promise_terms(tokens, [], {})
    assert (term.kind, term.head, term.phrase, term.source) == ("promise", 1, (1, 2, 3), "lexicon")
    assert term.describe(tokens)["term"] == "will definitely be"


def test_promise_terms_share_no_token_with_another_term_but_an_opinion_word():
    tokens = tokenize(PROMISE)
    assert _promise_terms(tokens, [CausalTerm(head=2, phrase=(1, 2), kind="negation")], {}) == []
    # an opinion word inside the promise ("would recommend") gives way to it
    assert [t.kind for t in _promise_terms(tokens, [CausalTerm(head=2, phrase=(2,), kind="word")], {})] == ["promise"]
    # two promises in two sentences are two terms
    tokens = tokenize("we will be back . i would recommend it .")
    terms = _promise_terms(tokens, [], {})
    assert [(t.head, t.phrase) for t in terms] == [(1, (1, 2)), (6, (6, 7))]
    assert _promise_terms(tokenize("the staff was friendly ."), [], {}) == []


class _ScriptedLM:
    """A stand-in for the causal LM scorer: a word it dislikes scores far below the floor, others 0."""

    def __init__(self, disliked: str) -> None:
        self.disliked, self.requests = disliked, []

    def span_scores(self, requests, right_words=2, per="token"):
        self.requests += list(requests)
        assert per == "word"
        return [-10.0 if self.disliked in r.candidate.split() else 0.0 for r in requests]


def test_fluency_lm_reranks_the_replacements_of_a_term_in_its_sentence(method, artifacts, task):
    # alternatives=1: the one REP-CT rewrite takes each term's best replacement (no choice among alternatives)
    method = with_config(method, artifacts, task, alternatives=1)
    text = "the staff were friendly . the fries were great ."
    [plain] = generate(method, task, (text, "positive"))
    chosen = [e["new"] for e in rep_ct(plain)[0].meta["edits"] if e["old"] == "friendly"]
    assert chosen
    lm = _ScriptedLM(chosen[0])
    method.fluency_lm = lm
    try:
        [ranked] = generate(method, task, (text, "positive"))
    finally:
        method.fluency_lm = None
        method.close()
    # the LM read each candidate in its own sentence, with the edit's span in both versions
    friendly = [r for r in lm.requests if r.original == "the staff were friendly ."]
    assert len(friendly) > 1
    for r in friendly:
        assert r.original[slice(*r.orig_span)] == "friendly"
        assert r.candidate[:r.cand_span[0]] == "the staff were " and r.candidate[r.cand_span[1]:] == " ."
    # the word it scored below the floor is not chosen while another was read
    now = [e["new"] for e in rep_ct(ranked)[0].meta["edits"] if e["old"] == "friendly"]
    assert now and now[0] != chosen[0]
    assert now[0] in {r.candidate[slice(*r.cand_span)] for r in friendly}

