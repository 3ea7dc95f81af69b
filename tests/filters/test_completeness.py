"""The completeness check: a rewrite must leave no opinion of the source's polarity standing. Read clause by
clause with the opinion lexicon (negation included) and a label judge; a short text is read whole, a long one
only in the clauses the rewrite changed.

The unit tests use a fake judge with fixed probabilities; the regression tests at the end read the rewrites of
the issue (auto-CAD's, CoBA's, an LLM's) with the real general embedding judge."""

from __future__ import annotations

import numpy as np
import pytest

from cfaug.data.records import Counterfactual, Record
from cfaug.data.tasks import NLITask, SentimentTask
from cfaug.editing.text import tokenize
from cfaug.filters.completeness import NAME, CompletenessCheck, clauses

TASK = SentimentTask()


class FakeJudge:
    """A label judge reading texts by substring rules: the first rule whose substring the (lower-cased) text
    holds gives P(positive), else ``default``. Remembers every text it was asked about."""

    labels = ("negative", "positive")
    name = "fake-judge"

    def __init__(self, rules: dict[str, float] | None = None, default: float = 0.5) -> None:
        self.rules = dict(rules or {})
        self.default = default
        self.asked: list[str] = []

    def predict_proba(self, texts):
        self.asked += list(texts)
        out = []
        for text in texts:
            p = next((v for k, v in self.rules.items() if k in text.lower()), self.default)
            out.append([1.0 - p, p])
        return np.array(out)


def left(original: str, rewrite: str, source: str, judge=None, **kw):
    """The leftovers of one rewrite."""
    return CompletenessCheck(TASK, judge, **kw).leftovers([(original, rewrite, source)])[0]


def cf(original: str, rewrite: str, source: str = "positive", passed: bool = True) -> Counterfactual:
    target = "negative" if source == "positive" else "positive"
    meta = {"filters": {"changed": True}, "passed": passed}
    if not passed:
        meta["filters"] = {"changed": False}
    return Counterfactual(Record("1", {"text": original}, source), {"text": rewrite}, target, "m", meta)


def test_clauses_split_at_marks_and_joining_words():
    text = "friendly and welcoming with a fun atmosphere , terrific food ! Great."
    assert [" ".join(t.text for t in c) for c in clauses(text)] == [
        "friendly", "welcoming with a fun atmosphere", "terrific food", "Great"]


# ------------------------------------------------------------------------------------------ the lexicon


def test_an_opinion_word_of_the_source_polarity_left_in_a_clause_is_found():
    original = "friendly and welcoming with a fun atmosphere and terrific food ."
    rewrite = "rude and welcoming with a fun atmosphere and terrible food ."  # 'fun' left standing
    judge = FakeJudge({"fun atmosphere": 0.8})
    (found,) = left(original, rewrite, "positive", judge)
    assert (found.word, found.negated, found.clause) == ("fun", False, "welcoming with a fun atmosphere")
    assert rewrite[found.start:found.end] == "fun" and found.clause_prob == pytest.approx(0.8)
    # the clauses holding only target words ('rude', 'terrible food') are trusted: the judge reads one clause
    assert judge.asked == ["welcoming with a fun atmosphere"]
    # the judge reads the clause as the target: the word does not count
    assert left(original, rewrite, "positive", FakeJudge({"fun atmosphere": 0.3})) == []
    # without a judge every suspect word counts
    (alone,) = left(original, rewrite, "positive", None)
    assert alone.word == "fun" and alone.clause_prob is None
    # the flipped rewrite leaves nothing
    flipped = "rude and welcoming with a tedious atmosphere and terrible food ."
    assert left(original, flipped, "positive", None) == []


def test_negation_turns_an_opinion_word():
    judge = FakeJudge(default=0.9)  # every clause reads positive (the source) to the judge
    # 'not good' reads negative, the target: trusted, not even read by the judge
    assert left("the food was good .", "the food was not good .", "positive", judge) == []
    assert left("one of my favorite stops !", "one of my least favorite stops !", "positive", judge) == []
    assert judge.asked == []
    # 'not bad' left in a rewrite toward negative reads positive: a leftover
    (found,) = left("the food was good and not bad .", "the food was awful and not bad .", "positive", judge)
    assert (found.word, found.negated, found.clause) == ("bad", True, "not bad")
    assert found.describe() == "'not \u2026 bad' in \"not bad\" (judge: 0.90)"
    # a negator further back than the window (3 words) does not turn the word
    (far,) = left("no matter what the food is good and the staff are friendly .",
                  "no matter what the food is good and the staff are rude .", "positive", judge)
    assert (far.word, far.negated) == ("good", False)


def test_a_clause_the_judge_reads_as_the_source_counts_whatever_its_words():
    original = "always rude in their tone and always have shitty customer service !"
    rewrite = "always friendly in their tone and always have shitty customer service !"
    (found,) = left(original, rewrite, "negative", FakeJudge({"shitty": 0.04}))
    assert found.word == found.clause == "always have shitty customer service"
    assert found.clause_prob == pytest.approx(0.96) and not found.negated
    assert rewrite[found.start:found.end] == found.clause
    assert found.describe() == "\"always have shitty customer service\" (judge: 0.96)"
    # below clause_prob a clause without opinion words does not count ...
    assert left(original, rewrite, "negative", FakeJudge({"shitty": 0.15})) == []
    # ... unless clause_prob is lowered
    assert len(left(original, rewrite, "negative", FakeJudge({"shitty": 0.15}), clause_prob=0.8)) == 1
    # without a judge only lexicon words count ('shitty' is not one)
    assert left(original, rewrite, "negative", None) == []


def test_a_clause_whose_opinion_words_all_read_as_the_target_is_trusted_over_the_judge():
    judge = FakeJudge(default=0.01)  # the judge reads everything as negative, the source
    original = "it was terrible , and it was unpleasant ."
    assert left(original, "it was n't terrible , but it was pleasant .", "negative", judge) == []
    assert judge.asked == []
    # the same judge with 'terrible' left un-negated
    (found,) = left(original, "it was terrible , but it was pleasant .", "negative", judge)
    assert (found.word, found.clause, found.negated) == ("terrible", "it was terrible", False)
    assert judge.asked == ["it was terrible"]


# ------------------------------------------------------------------------------------------ long texts

FILLER = ("The story follows a family who moves from the city to a small town in the north of the country . "
          "The father takes a job at the local mill and the mother opens a shop on the main street . "
          "Their two children start at a new school in the autumn and meet the neighbours . "
          "Most of the scenes take place in the kitchen of the old house near the river . "
          "The last part is set ten years later in the same town . ")
LONG_ORIGINAL = ("The movie was great . " + FILLER + "It runs two hours . "
                 "The acting was wonderful with a clever plot .")
LONG_REWRITE = ("The movie was great . " + FILLER + "It runs three hours . "
                "The acting was dull with a clever plot .")


def test_a_long_text_is_read_only_in_its_changed_clauses():
    assert sum(1 for t in tokenize(LONG_REWRITE) if t.is_word) > 95  # short_words is 60
    rules = {"movie was great": 1.0, "three hours": 0.99, "clever plot": 0.95}
    judge = FakeJudge(rules, default=0.5)
    (found,) = left(LONG_ORIGINAL, LONG_REWRITE, "positive", judge)
    # the unchanged sentence with 'great' is not read; a changed clause without opinion words is not sent to the
    # judge either (a long text has no clause rule)
    assert (found.word, found.clause) == ("clever", "The acting was dull with a clever plot")
    assert LONG_REWRITE[found.start:found.end] == "clever"
    assert sorted(judge.asked) == ["The acting was dull with a clever plot"]


def test_a_long_texts_opinion_word_counts_only_from_long_min_clause_prob():
    judge = FakeJudge({"clever plot": 0.8})
    assert left(LONG_ORIGINAL, LONG_REWRITE, "positive", judge) == []  # 0.8 < long_min_clause_prob (0.9)
    assert len(left(LONG_ORIGINAL, LONG_REWRITE, "positive", judge, long_min_clause_prob=0.75)) == 1
    # the same clause in a short text counts from min_clause_prob (0.5)
    (short,) = left("The acting was wonderful with a clever plot .", "The acting was dull with a clever plot .",
                    "positive", judge)
    assert short.word == "clever"
    # the text is long from short_words on
    whole = left(LONG_ORIGINAL, LONG_REWRITE, "positive", FakeJudge({"clever plot": 0.8}, default=0.99),
                 short_words=200)  # read whole: the unchanged 'great' and the clauses the judge reads positive
    assert {"clever", "great", "It runs three hours"} <= {x.word for x in whole}


# ------------------------------------------------------------------------------------------ apply


def test_apply_records_the_verdict_in_meta():
    judge = FakeJudge({"fun atmosphere": 0.8})
    check = CompletenessCheck(TASK, judge)
    original = "friendly and welcoming with a fun atmosphere and terrific food ."
    bad = cf(original, "rude and welcoming with a fun atmosphere and terrible food .")
    good = cf(original, "rude and welcoming with a tedious atmosphere and terrible food .")
    check.apply([bad, good])
    assert bad.passed is False and bad.meta["passed"] is False
    assert bad.meta["filters"] == {"changed": True, NAME: False}
    assert bad.meta["completeness"]["complete"] is False
    assert [x["word"] for x in bad.meta["completeness"]["leftovers"]] == ["fun"]
    assert bad.meta["completeness"]["leftovers"][0]["clause_prob"] == 0.8
    note = bad.meta["filter_notes"][NAME]
    assert "'fun'" in note and "welcoming with a fun atmosphere" in note
    assert good.passed and good.meta["filters"] == {"changed": True, NAME: True}
    assert good.meta["completeness"] == {"complete": True, "leftovers": []}
    assert "filter_notes" not in good.meta
    assert check.describe()["judge"] == "fake-judge"


def test_candidates_already_failed_are_not_read():
    judge = FakeJudge(default=0.99)
    failed = cf("the food was good .", "the food was good , really .", passed=False)
    CompletenessCheck(TASK, judge).apply([failed])
    assert judge.asked == [] and "completeness" not in failed.meta
    assert failed.meta["filters"] == {"changed": False}
    # the same candidate passing so far is read and fails
    alive = cf("the food was good .", "the food was good , really .")
    CompletenessCheck(TASK, judge).apply([alive])
    assert judge.asked and alive.meta["filters"][NAME] is False


def test_tasks_without_polarity_pass_unread():
    judge = FakeJudge(default=0.99)
    record = Record("1", {"premise": "The man is good.", "hypothesis": "A man is bad."}, "entailment")
    nli = Counterfactual(record, {"premise": "The man is good.", "hypothesis": "A man is good."}, "contradiction",
                         "m", {"filters": {"changed": True}, "passed": True})
    before = {k: (dict(v) if isinstance(v, dict) else v) for k, v in nli.meta.items()}
    CompletenessCheck(NLITask(), judge).apply([nli])
    assert nli.meta == before and judge.asked == []


# ------------------------------------------------------------------------------------------ the rewrites,
# read by the real general judge


@pytest.fixture(scope="module")
def real_check():
    from cfaug.judges.embedding_logreg import general_embedding_judge

    return CompletenessCheck(TASK, general_embedding_judge())


def words_left(check, original, rewrite, source):
    return [x.word for x in check.leftovers([(original, rewrite, source)])[0]]


def test_regression_auto_cad_flips_the_first_opinion_and_leaves_the_second(real_check):
    # (a) an opinion the lexicon does not know ('shitty'), read by the judge
    assert words_left(real_check, "always rude in their tone and always have shitty customer service !",
                      "always friendly in their tone and always have shitty customer service !", "negative") == [
        "always have shitty customer service"]


@pytest.mark.xfail(strict=True, reason="the check finds nothing left: 'welcoming' is not in the opinion lexicon, "
                   "and its clause 'welcoming with a tedious atmosphere' holds a target word ('tedious'), so it is "
                   "trusted and never read by the judge (which gives it 0.78 positive, below clause_prob anyway)")
def test_regression_a_positive_word_the_lexicon_does_not_know_left_among_flipped_ones(real_check):
    # (b)
    assert words_left(real_check, "friendly and welcoming with a fun atmosphere and terrific food .",
                      "rude and welcoming with a tedious atmosphere and terrible food .", "positive")


def test_regression_coba_flips_one_aspect_of_two(real_check):
    # (c) CoBA's offline rewrite toward positive of a negative review
    assert words_left(real_check, "The food was bad and the service was bad.",
                      "The food was great and the service was bad.", "negative") == ["bad"]


def test_regression_an_llm_rewrite_that_appends_a_word(real_check):
    # (d) a 'positive' rewrite of a negative review that keeps its opinions and adds "Great."
    found = words_left(real_check, "If you haven't seen this, don't. It's terrible. It is pure trash.",
                       "If you haven't seen this, it's terrible. It is pure trash. Great.", "negative")
    assert "terrible" in found and "trash" in found


@pytest.mark.parametrize("original,rewrite", [
    ("excellent chinese food , great service and friendly staff .", "poor chinese food , terrible service and rude staff ."),
    ("the food is pretty good .", "the food is pretty bad ."),
    ("one of my favorite quick stops in phoenix !", "one of my least favorite quick stops in phoenix !"),
])
def test_regression_complete_flips_stay_complete(real_check, original, rewrite):
    # (e) the judge reads 'one of my least favorite quick stops in phoenix' as 0.82 positive: the lexicon's
    # reading of 'least favorite' (the target) is trusted over it
    assert words_left(real_check, original, rewrite, "positive") == []
