"""The one loader of a classifier given by path, and how its outputs get the task's labels."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cfaug.config import ConfigError
from cfaug.data.tasks import make_task
from cfaug.judges.classifier import (HFClassifierJudge, check_classifier_folder, folder_label_names,
                                     is_generic_label, load_classifier_by_path, map_model_labels)
from cfaug.local_models import ModelPathError
from cfaug.judges.registry import JudgeContext, build_judge

SENTIMENT = make_task("sentiment").label_space
NLI = make_task("nli").label_space


@pytest.mark.parametrize("name,generic", [("LABEL_0", True), ("label_12", True), ("Label3", True),
                                          ("positive", False), ("0", False), ("labels", False)])
def test_generic_names(name, generic):
    assert is_generic_label(name) is generic


def test_spellings_map_onto_the_task_labels():
    assert map_model_labels(["NEGATIVE", "POSITIVE"], label_space=SENTIMENT) == ("negative", "positive")
    assert map_model_labels(["pos", "neg"], label_space=SENTIMENT) == ("positive", "negative")
    assert map_model_labels(["ENTAILMENT", "Neutral", "contradiction"], label_space=NLI) == \
        ("entailment", "neutral", "contradiction")
    assert map_model_labels(["Fluent", "NOT_FLUENT"]) == ("fluent", "not_fluent")  # no task: lower-cased
    # looking spellings up leaves the spelling the output keeps alone
    assert SENTIMENT.surface("positive") == "positive"


def test_generic_names_need_the_users_labels():
    with pytest.raises(ConfigError, match=r"unnamed labels \['label_0', 'label_1'\]; pass "
                                          r"-p model_labels=negative,positive with the task label"):
        map_model_labels(["LABEL_0", "LABEL_1"], label_space=SENTIMENT, flag="-p model_labels=")
    assert map_model_labels(["LABEL_0", "LABEL_1"], given=["Negative", "pos"], label_space=SENTIMENT) == \
        ("negative", "positive")
    with pytest.raises(ConfigError, match="has 2 outputs but 3 labels were given"):
        map_model_labels(["LABEL_0", "LABEL_1"], given=["a", "b", "c"])
    with pytest.raises(ConfigError, match="'joy' is not a label of the task"):
        map_model_labels(["joy", "anger"], label_space=SENTIMENT)
    with pytest.raises(ConfigError, match="two outputs have the same label"):
        map_model_labels(["pos", "positive"], label_space=SENTIMENT)


def test_folder_label_names(tmp_path, make_tiny_bert):
    hf = make_tiny_bert(tmp_path / "hf", "classifier", id2label={0: "NEG", 1: "POS"})
    assert folder_label_names(hf) == ["NEG", "POS"]
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text(json.dumps({"model_type": "bert", "num_labels": 3}))
    assert folder_label_names(bare) == ["LABEL_0", "LABEL_1", "LABEL_2"]
    with pytest.raises(ConfigError, match="neither a classifier saved by cfaug"):
        folder_label_names(tmp_path)


def test_a_hugging_face_folder(tmp_path, make_tiny_bert):
    folder = make_tiny_bert(tmp_path / "hf", "classifier", id2label={0: "POSITIVE", 1: "NEGATIVE"})
    clf = load_classifier_by_path(folder, label_space=SENTIMENT, device="cpu")
    assert isinstance(clf, HFClassifierJudge) and clf.labels == ("positive", "negative") and clf.path == folder
    assert clf.predict_proba(["a good film", "a bad film"]).shape == (2, 2)
    assert check_classifier_folder(folder, label_space=SENTIMENT) == ("positive", "negative")
    generic = make_tiny_bert(tmp_path / "generic", "classifier", id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ConfigError, match="pass -p x_labels=negative,positive"):
        check_classifier_folder(generic, label_space=SENTIMENT, flag="-p x_labels=")
    assert check_classifier_folder(generic, labels="positive,negative", label_space=SENTIMENT) == \
        ("positive", "negative")
    assert load_classifier_by_path(generic, labels=["positive", "negative"], label_space=SENTIMENT).labels == \
        ("positive", "negative")


def test_a_folder_saved_by_cfaug(tmp_path):
    from cfaug.classifiers import build_classifier

    clf = build_classifier("tfidf-logreg", {}, seed=0)
    clf.fit(["good film", "great plot", "bad film", "awful plot"] * 3,
            ["Positive", "Positive", "Negative", "Negative"] * 3)
    clf.save(tmp_path / "saved")
    loaded = load_classifier_by_path(tmp_path / "saved", label_space=SENTIMENT)
    assert loaded.labels == ("negative", "positive") and loaded.path == tmp_path / "saved"
    assert load_classifier_by_path(tmp_path / "saved").labels == ("Negative", "Positive")  # no task: as saved
    assert np.allclose(loaded.predict_proba(["good"]), clf.predict_proba(["good"]))


@pytest.mark.parametrize("name", ["distilbert-base-uncased-finetuned-sst-2-english", "textattack/bert-base-SST-2"])
def test_hub_names_are_refused(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for load in (load_classifier_by_path, check_classifier_folder):
        with pytest.raises(ModelPathError, match="models load by local path only"):
            load(name)


def test_the_hf_judge_uses_the_loader(tmp_path, make_tiny_bert):
    ctx = JudgeContext(make_task("sentiment"))
    spelled = make_tiny_bert(tmp_path / "spelled", "classifier", id2label={0: "neg", 1: "pos"})
    assert build_judge({"@judges": "hf-classifier", "path": str(spelled)}, ctx).labels == ("negative", "positive")
    generic = make_tiny_bert(tmp_path / "generic", "classifier", id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ConfigError, match="judge_labels or classifier_labels"):
        build_judge({"@judges": "hf-classifier", "path": str(generic)}, ctx)
    judge = build_judge({"@judges": "hf-classifier", "path": str(generic), "labels": "positive,negative"}, ctx)
    assert judge.labels == ("positive", "negative")


def test_a_discriminator_by_path(tmp_path, make_tiny_bert):
    from cfaug.judges.aste_discriminators import FLUENT, NOT_FLUENT, FluencyDiscriminator

    folder = make_tiny_bert(tmp_path / "fluency", "classifier", id2label={0: NOT_FLUENT, 1: FLUENT})
    disc = FluencyDiscriminator.load(folder)
    assert disc.classifier.labels == (NOT_FLUENT, FLUENT)
    assert disc.fluency(["the film was good ."]).shape == (1,)
    with pytest.raises(ConfigError, match="models load by local path only"):
        FluencyDiscriminator.load("some-hub-name")
