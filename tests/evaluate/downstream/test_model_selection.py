"""How the downstream harness chooses the classifier's settings without a dev set (as ``cfaug compare`` runs it):
a few held-out rows must not decide them, ties go to the default (C = 1), and a model that predicts one
label for a whole test set is flagged."""

import random
from collections import Counter

import pytest

from cfaug.classifiers import accuracy
from cfaug.evaluate.downstream import LabelledSet, TrainCondition, markdown_table, run_downstream

POS = "good great lovely tasty friendly fresh superb amazing delicious perfect nice wonderful".split()
NEG = "bad awful rude stale bland dirty slow terrible horrible greasy cold gross".split()
FILLER = "the a food place service staff it this was is and very our we were here there menu table order".split()


def reviews(n: int, seed: int, positive_share: float = 0.5, noise: float = 0.0) -> tuple[list[str], list[str]]:
    """Short restaurant sentences, each with one opinion word among filler words; with ``noise``, that share
    of them carries a word of the other label (hard rows, as real reviews have)."""
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(n):
        label = "positive" if rng.random() < positive_share else "negative"
        shown = label if rng.random() >= noise else ("negative" if label == "positive" else "positive")
        words = [rng.choice(FILLER) for _ in range(rng.randint(4, 10))]
        words.insert(rng.randrange(len(words) + 1), rng.choice(POS if shown == "positive" else NEG))
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


def test_a_small_training_set_does_not_pick_the_smallest_c_that_predicts_one_label():
    """170 noisy training rows, 62% positive (originals plus counterfactuals that mostly flip one way), no dev
    set. Choosing on a held-out tenth (17 rows) found every setting about equally good and kept the grid's
    first, C = 0.01, whose SVM gives every test item the majority label (53.5% on this balanced test set).
    The settings are now chosen on every training row by cross-validation, scored so that predicting the
    majority label does not pay, near-ties going to C = 1."""
    x, y = reviews(170, 5, positive_share=0.62, noise=0.3)
    tx, ty = reviews(200, 999)
    test = LabelledSet("test", tx, ty, "test", "in-domain")
    logged, predictions = [], {}
    result = run_downstream([TrainCondition("originals + m", [LabelledSet("train", x, y)])],
                            LabelledSet("dev", [], [], "none"), [test], "tfidf-svm", None, seeds=[0],
                            log=logged.append, predictions=predictions)
    (chosen,) = result.chosen["originals + m"]
    assert chosen["C"] == 1.0  # the held-out tenth chose C = 0.01 here
    assert chosen["selection"] == "5-fold cross-validation" and chosen["selection_rows"] == 170
    assert chosen["metric"] == "balanced accuracy" and len(chosen["grid_scores"]) == 8
    assert chosen["score"] == pytest.approx(max(g["score"] for g in chosen["grid_scores"] if g["C"] == 1.0), abs=1e-6)
    predicted = predictions["originals + m"]["test"][0]
    assert max(Counter(predicted).values()) / len(predicted) < 0.8  # both labels predicted
    assert accuracy(predicted, ty) > 0.7 and result.warnings == []
    assert not any(m.startswith("warning") for m in logged)
    assert "- originals + m: C=1, ngram_max=1 with seed 0 (5-fold cross-validation; balanced accuracy 0." \
        in markdown_table(result)


def test_ties_go_to_the_default_and_tiny_training_sets_keep_it():
    x, y = reviews(40, 3)
    test = LabelledSet("test", *reviews(60, 4), "test", "in-domain")
    # 40 rows: no search, the default setting, and why
    result = run_downstream([TrainCondition("o", [LabelledSet("t", x, y)])], LabelledSet("dev", [], [], "none"),
                            [test], "tfidf-svm", None, seeds=[0, 1])
    for chosen in result.chosen["o"]:
        assert (chosen["C"], chosen["ngram_max"], chosen["selection"]) == (1.0, 2, "default")
        assert chosen["score"] is None and "40 training rows, under 50" in chosen["selection_note"]
    # an easy task every setting gets right: the tie goes to C = 1, not to the grid's first setting
    x, y = reviews(120, 5)
    result = run_downstream([TrainCondition("o", [LabelledSet("t", x, y)])], LabelledSet("dev", [], [], "none"),
                            [test], "tfidf-svm", {"c_grid": "10,100,1", "ngram_grid": "1"}, seeds=[0])
    (chosen,) = result.chosen["o"]
    assert {g["score"] for g in chosen["grid_scores"]} == {1.0} and chosen["C"] == 1.0


def test_a_model_that_predicts_one_label_is_flagged_in_the_result_the_log_and_the_table():
    x, y = reviews(120, 6, positive_share=0.7, noise=0.3)
    tx, ty = reviews(100, 7)
    logged = []
    result = run_downstream([TrainCondition("o", [LabelledSet("t", x, y)])], LabelledSet("dev", [], [], "none"),
                            [LabelledSet("test", tx, ty, "test", "in-domain"),
                             LabelledSet("all-positive", tx, ["positive"] * len(tx), "p", "challenge")],
                            "tfidf-svm", {"c_grid": "0.0001"}, seeds=[0], log=logged.append)
    (w,) = result.warnings  # on the all-positive set predicting one label is no sign of a broken model
    assert (w["condition"], w["seed"], w["test_set"], w["label"]) == ("o", 0, "test", "positive")
    assert w["share"] >= 0.95 and w["items"] == 100 and w["chosen"]["C"] == 0.0001
    assert any(m.startswith("warning: o, seed 0: the classifier predicts 'positive' for") for m in logged)
    assert result.to_json()["warnings"] == result.warnings
    assert "Warnings:" in markdown_table(result)
