"""The shared choice step: each item's passing candidates scored by an independent judge's P(target) (capped),
n-gram fluency, closeness and the method's order; the best ``keep`` written with ``meta["choice"]``."""

from __future__ import annotations

import numpy as np
import pytest

from cfaug.data.records import Counterfactual, NoCounterfactual, Record
from cfaug.data.tasks import SentimentTask
from cfaug.filters.choice import ChoiceStep, general_fluency, ngram_fluency

TASK = SentimentTask()
ORIGINAL = "the food was good ."
SOURCE = Record("1", {"text": ORIGINAL}, "positive")


class FakeJudge:
    """P(positive) of each text from a table (``default`` for others); labels in another order than the
    task's, to check the columns are matched by name."""

    labels = ("positive", "negative")
    name = "fake-judge"

    def __init__(self, p_positive: dict[str, float], default: float = 0.5) -> None:
        self.p = p_positive
        self.default = default
        self.asked: list[str] = []

    def predict_proba(self, texts):
        self.asked += list(texts)
        return np.array([[self.p.get(t, self.default), 1.0 - self.p.get(t, self.default)] for t in texts])


def neg(p_negative: dict[str, float]) -> FakeJudge:
    """A judge giving each text the probability of negative (the target of the candidates below)."""
    return FakeJudge({t: 1.0 - p for t, p in p_negative.items()})


def fluency(table: dict[str, float], default: float = -5.0):
    """A fake n-gram fluency: mean log probability per token from a table."""
    return lambda text: table.get(text, default)


def cand(text: str, passed: bool = True, source: Record = SOURCE, **meta) -> Counterfactual:
    return Counterfactual(source, {"text": text}, "negative", "m", {"passed": passed, **meta})


def texts(cfs):
    return [cf.fields["text"] for cf in cfs]


# one word of five changed each: closeness 0.8 for all
BAD, AWFUL, POOR = "the food was bad .", "the food was awful .", "the food was poor ."


def test_below_the_cap_the_judges_target_prob_decides():
    step = ChoiceStep(TASK, neg({BAD: 0.6, AWFUL: 0.8, POOR: 0.7}))
    (chosen,) = step.choose([[cand(BAD), cand(AWFUL), cand(POOR)]])
    assert texts(chosen) == [AWFUL]
    assert chosen[0].meta["choice"]["target_prob"] == pytest.approx(0.8)


def test_above_the_cap_fluency_closeness_and_order_decide():
    judge = neg({BAD: 0.95, AWFUL: 0.99, POOR: 0.92})  # all above the cap (0.9)
    # fluency: 'bad' as likely as the original, 'awful' less likely
    flu = fluency({ORIGINAL: -2.0, BAD: -2.0, AWFUL: -3.0, POOR: -3.0})
    (chosen,) = ChoiceStep(TASK, judge, flu).choose([[cand(AWFUL), cand(POOR), cand(BAD)]])
    assert texts(chosen) == [BAD]
    # closeness: one word changed beats two
    far = "the meal was bad ."
    judge.p[far] = 0.0
    (chosen,) = ChoiceStep(TASK, judge).choose([[cand(far), cand(AWFUL)]])
    assert texts(chosen) == [AWFUL]
    assert chosen[0].meta["choice"]["closeness"] == pytest.approx(0.8)
    # all else equal, the method's order of preference
    assert texts(ChoiceStep(TASK, judge).choose([[cand(AWFUL), cand(POOR)]])[0]) == [AWFUL]
    assert texts(ChoiceStep(TASK, judge).choose([[cand(POOR), cand(AWFUL)]])[0]) == [POOR]
    # without the cap the judge's 0.99 would win over the order
    assert texts(ChoiceStep(TASK, judge, target_cap=1.0).choose([[cand(POOR), cand(AWFUL)]])[0]) == [AWFUL]


def test_keep_two_keeps_the_best_two_in_order_with_their_ranks():
    # scores with the order's penalty: BAD 0.6 + 0.4 = 1.0, AWFUL 0.8 + 0.4 - 0.05 = 1.15, POOR 0.76 + 0.4 - 0.1
    step = ChoiceStep(TASK, neg({BAD: 0.6, AWFUL: 0.8, POOR: 0.76}), keep=2)
    (chosen,) = step.choose([[cand(BAD), cand(AWFUL), cand(POOR)]])
    assert texts(chosen) == [AWFUL, POOR]
    assert [cf.meta["choice"]["rank"] for cf in chosen] == [1, 2]
    assert all(cf.meta["choice"]["candidates"] == 3 for cf in chosen)


def test_choice_meta_holds_the_score_and_its_parts():
    flu = fluency({ORIGINAL: -2.0, AWFUL: -2.5})
    (chosen,) = ChoiceStep(TASK, neg({AWFUL: 0.8}), flu).choose([[cand(AWFUL)]])
    (cf,) = chosen
    c = cf.meta["choice"]
    assert set(c) >= {"score", "target_prob", "fluency", "closeness", "rank", "candidates"}
    assert (c["target_prob"], c["fluency"], c["closeness"], c["rank"], c["candidates"]) == (0.8, -0.5, 0.8, 1, 1)
    assert c["score"] == pytest.approx(0.8 + 0.3 * -0.5 + 0.5 * 0.8)
    assert c["judge"] == "fake-judge"


def test_failed_candidates_take_no_part():
    judge = neg({BAD: 0.6, AWFUL: 0.99})
    failed = cand(AWFUL, passed=False)
    (chosen,) = ChoiceStep(TASK, judge).choose([[failed, cand(BAD)]])
    # the failed one stays after the chosen one, unscored (written only with --keep-failed)
    assert texts(chosen) == [BAD, AWFUL] and chosen[0].meta["choice"]["candidates"] == 1 and chosen[1] is failed
    assert "choice" not in failed.meta and judge.asked == [BAD]


def test_an_item_with_none_passing_keeps_its_failed_candidates():
    judge = neg({BAD: 0.9})
    failed = [cand(BAD, passed=False), cand(AWFUL, passed=False)]
    ok = cand(POOR)
    out = ChoiceStep(TASK, judge).choose([failed, [ok], []])
    assert out[0] is failed and all("choice" not in cf.meta for cf in failed)
    assert out[1] == [ok] and out[2] == []


def test_a_no_counterfactual_passes_through_with_its_reason():
    none = NoCounterfactual("no opinion word to edit")
    (out,) = ChoiceStep(TASK, neg({})).choose([none])
    assert out is none and isinstance(out, NoCounterfactual) and out.reason == "no opinion word to edit"


def test_without_a_judge_the_recorded_probabilities_are_read():
    step = ChoiceStep(TASK, None)
    # the flip check's probability first ...
    a = cand(BAD, flip_check={"target_prob": 0.6}, own_judge={"target_prob": 0.99})
    b = cand(AWFUL, flip_check={"target_prob": 0.8}, own_judge={"target_prob": 0.1})
    (chosen,) = step.choose([[a, b]])
    assert texts(chosen) == [AWFUL] and chosen[0].meta["choice"]["target_prob"] == 0.8
    # ... else the method's own judge's
    a = cand(BAD, own_judge={"target_prob": 0.85})
    b = cand(AWFUL, own_judge={"target_prob": 0.6})
    (chosen,) = step.choose([[b, a]])
    assert texts(chosen) == [BAD] and chosen[0].meta["choice"]["target_prob"] == 0.85
    assert chosen[0].meta["choice"]["judge"] == "own_judge"  # whose probability it is


def test_a_long_text_is_scored_with_its_recorded_probability_not_read_by_the_judge():
    long_original = " ".join(["the plot was good and the food was great ."] * 8)  # 80 words
    judge = neg({})
    a = cand(long_original.replace("good", "bad"), source=Record("2", {"text": long_original}, "positive"),
             own_judge={"target_prob": 0.7, "name": "tfidf-logreg"})
    (chosen,) = ChoiceStep(TASK, judge).choose([[a]])
    assert judge.asked == [] and chosen[0].meta["choice"]["target_prob"] == 0.7
    assert chosen[0].meta["choice"]["judge"] == "tfidf-logreg"


def test_the_lm_breaks_only_near_ties():
    # scores: AWFUL 0.80 + 0.4 = 1.20 (first); BAD 0.82 + 0.4 - 0.05 = 1.17 (within 0.05); POOR 0.70 + 0.4 - 0.1
    judge = neg({AWFUL: 0.80, BAD: 0.82, POOR: 0.70})
    calls = []

    def lm(batch):
        calls.append(list(batch))
        table = {ORIGINAL: -2.0, AWFUL: -4.0, BAD: -2.0, POOR: 0.0}  # POOR would win if it were read
        return [table[t] for t in batch]

    (plain,) = ChoiceStep(TASK, judge, keep=3).choose([[cand(AWFUL), cand(BAD), cand(POOR)]])
    assert texts(plain) == [AWFUL, BAD, POOR]
    (chosen,) = ChoiceStep(TASK, judge, lm=lm, keep=3).choose([[cand(AWFUL), cand(BAD), cand(POOR)]])
    # AWFUL read as less fluent falls to 1.20 - 0.3 x 2 = 0.60, behind POOR (1.00), which the LM never read
    assert texts(chosen) == [BAD, POOR, AWFUL]
    assert calls == [[ORIGINAL, AWFUL, BAD]]
    assert chosen[0].meta["choice"]["lm_fluency"] == 0.0 and chosen[2].meta["choice"]["lm_fluency"] == -2.0
    assert chosen[2].meta["choice"]["score"] == 0.6
    assert "lm_fluency" not in chosen[1].meta["choice"]


SENTENCES = ["the food was great and the service was friendly .", "the food was good and the staff was friendly .",
             "the service was slow and the food was cold .", "the staff was rude and the food was bad ."] * 3


@pytest.mark.parametrize("kind", ["ngram", "bigram"])
def test_ngram_fluency_prefers_in_domain_word_order(kind):
    from cfaug.editing.ngram import BigramModel
    from cfaug.editing.text import tokenize
    from cfaug.judges.ngram_lm import NgramLM

    if kind == "ngram":
        model = NgramLM(3).fit(SENTENCES)
    else:
        model = BigramModel().fit([[t.lower for t in tokenize(s) if t.is_word] for s in SENTENCES])
    per_token = ngram_fluency(model)
    fluent = per_token("the food was great and the staff was rude .")
    scrambled = per_token("staff the rude and was food great the was .")
    assert np.isfinite(fluent) and np.isfinite(scrambled)
    assert fluent > scrambled + 0.5


# ------------------------------------------------------------------------------------------ words that do not fit
# their slot, chosen among by the real parts


@pytest.fixture(scope="module")
def real_step():
    from cfaug.judges.embedding_logreg import general_embedding_judge

    return ChoiceStep(TASK, general_embedding_judge(), general_fluency())


@pytest.mark.parametrize("original,candidates,best", [
    ("perfect spot to shop for gift !", ["disappointed spot to shop for gift !", "terrible spot to shop for gift !"],
     "terrible spot to shop for gift !"),
    ("a movie worthy of anyone's time", ["a movie unbearable of anyone's time", "a movie unworthy of anyone's time"],
     "a movie unworthy of anyone's time"),
])
def test_regression_the_word_that_fits_its_slot_is_chosen(real_step, original, candidates, best):
    source = Record("1", {"text": original}, "positive")
    for order in (candidates, candidates[::-1]):  # whatever the method's order
        (chosen,) = real_step.choose([[cand(t, source=source) for t in order]])
        assert texts(chosen) == [best]
