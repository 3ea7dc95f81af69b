import pytest

from cfaug.data.tasks import make_task
from cfaug.evaluate.flip_rate import (JudgeChoice, build_judge, flip_rate, flip_rate_from_predictions,
                                      own_judge_flip_rate, training_overlap)
from cfaug.evaluate.pairs import CounterfactualPair
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

TRAIN = ["good film", "great acting", "good plot", "bad film", "awful acting", "bad plot"]


def pair(new, target, meta=None):
    return CounterfactualPair("1", "x", new, target, new, meta=meta or {})


def test_from_predictions_hand_computed():
    r = flip_rate_from_predictions(["positive", "negative", "positive", "positive"],
                                   ["positive", "positive", "positive", "negative"])
    assert r.value == pytest.approx(0.5)
    assert r.per_item == [1.0, 0.0, 1.0, 0.0]
    with pytest.raises(ValueError):
        flip_rate_from_predictions(["a"], [])


def test_judge_labels_are_mapped_to_task_labels():
    task = make_task("sentiment")
    judge = TfidfLinearJudge().fit(TRAIN, ["pos", "pos", "pos", "neg", "neg", "neg"])
    assert judge.labels == ("neg", "pos")
    pairs = [pair("a good film", "positive"), pair("a bad film", "positive"), pair("awful plot", "negative")]
    r = flip_rate(pairs, judge, task.label_space)
    assert r.value == pytest.approx(2 / 3)
    assert r.settings["independent"] is True and r.settings["judge"] == "tfidf-logreg"


def test_judge_with_foreign_labels_is_refused():
    judge = TfidfLinearJudge().fit(TRAIN, ["yes", "yes", "yes", "no", "no", "no"])
    with pytest.raises(ValueError, match="not a label of the task"):
        flip_rate([pair("good", "positive")], judge, make_task("sentiment").label_space)


def test_own_judge_is_labelled_not_independent():
    pairs = [pair("a", "positive", {"own_judge": {"name": "tfidf-logreg", "flipped": True}}),
             pair("b", "positive", {"own_judge": {"name": "tfidf-logreg", "flipped": False}}),
             pair("c", "positive", {"own_judge": {"name": "tfidf-logreg", "flipped": True}}),
             pair("d", "positive")]
    r = own_judge_flip_rate(pairs)
    assert r.value == pytest.approx(2 / 3) and r.n == 3
    assert r.per_item == [1.0, 0.0, 1.0, None]
    assert r.settings["independent"] is False
    assert r.name == "flip_rate_own_judge"


def test_build_judge_trains_on_named_dataset(tmp_path):
    f = tmp_path / "judge.tsv"
    f.write_text("text\tlabel\n" + "".join(f"{t}\t{'1' if i < 3 else '0'}\n" for i, t in enumerate(TRAIN)),
                 encoding="utf-8")
    judge, info, seen = build_judge(JudgeChoice(train_data=str(f), model="svm"), make_task("sentiment"))
    assert info["judge_source"] == "trained by cfaug" and info["train_rows"] == 6
    assert info["train_data_sha256"].startswith("sha256:")
    assert judge.labels == ("negative", "positive")
    assert "good film" in seen
    assert training_overlap(["good film", "something else"], seen) == 0.5
    with pytest.raises(ValueError, match="exactly one"):
        build_judge(JudgeChoice(), make_task("sentiment"))


def test_build_judge_from_local_classifier(tmp_path, tiny_bert):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)
    cfg = BertConfig.from_pretrained(tiny_bert)
    cfg.num_labels = 2
    cfg.id2label = {0: "NEGATIVE", 1: "POSITIVE"}
    cfg.label2id = {"NEGATIVE": 0, "POSITIVE": 1}
    out = tmp_path / "clf"
    BertForSequenceClassification(cfg).save_pretrained(out)
    BertTokenizerFast.from_pretrained(tiny_bert).save_pretrained(out)
    judge, info, seen = build_judge(JudgeChoice(path=str(out)), make_task("sentiment"))
    assert info["judge_source"] == "local classifier" and not seen
    r = flip_rate([pair("good film", "positive"), pair("bad film", "negative")], judge,
                  make_task("sentiment").label_space, info)
    assert r.n == 2 and r.value in (0.0, 0.5, 1.0)
    assert r.settings["path"] == str(out) and len(r.settings["weights_sha256"]) == 16
