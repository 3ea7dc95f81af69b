import json

import pytest

from cfaug.classifiers import CLASSIFIERS, HELD_OUT, accuracy, build_classifier, load_classifier, split_dev
from cfaug.config import ConfigError
from cfaug.registry import RegistryError


def test_every_builtin_is_registered():
    assert {"tfidf-svm.v1", "tfidf-logreg.v1", "bilstm.v1", "cnn.v1", "transformer.v1"} <= {
        e.name for e in CLASSIFIERS.entries()}


def test_unknown_classifier_or_parameter():
    with pytest.raises(RegistryError):
        build_classifier("naive-bayes")
    with pytest.raises(ConfigError, match="unknown parameter"):
        build_classifier("tfidf-svm", {"gamma": "1"})
    with pytest.raises(ConfigError, match="widths"):
        build_classifier("cnn", {"widths": "3,x"})


def test_accuracy_hand_computed():
    assert accuracy(["a", "b", "a"], ["a", "a", "a"]) == pytest.approx(2 / 3)


def test_split_dev_holds_out_a_seeded_stratified_tenth():
    x = [f"t{i}" for i in range(53)]
    y = ["a"] * 40 + ["b"] * 10 + ["c"] * 3
    tx, ty, dx, dy, facts = split_dev(x, y, None, None, seed=7)
    assert facts == {"dev": HELD_OUT, "dev_rows": 6}
    assert sorted(dy) == ["a"] * 4 + ["b", "c"] and set(ty) == {"a", "b", "c"}
    assert sorted(tx + dx) == sorted(x) and not set(tx) & set(dx)
    assert split_dev(x, y, [], [], seed=7) == (tx, ty, dx, dy, facts)  # an empty dev set counts as none
    assert split_dev(x, y, None, None, seed=8)[2] != dx
    # a given dev set passes through; one row per label leaves nothing to hold out
    assert split_dev(x, y, ["d"], ["a"], seed=0) == (x, y, ["d"], ["a"], {})
    assert split_dev(["p", "q"], ["a", "b"], None, None, 0)[2:4] == (["p", "q"], ["a", "b"])


def test_load_names_the_folder_when_files_are_missing(tmp_path, toy_data):
    with pytest.raises(ConfigError, match="no classifier.json") as e:
        load_classifier(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(e.value)
    (x, y), _, _ = toy_data
    clf = build_classifier("tfidf-logreg", {"c_grid": "1"})
    clf.fit(x, y)
    clf.save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "classifier.json").read_text())
    assert manifest["name"] == "tfidf-logreg.v1" and manifest["labels"] == ["negative", "positive"]
    assert manifest["config"]["c_grid"] == "1"
    (tmp_path / "m" / "model.pkl").unlink()
    with pytest.raises(ConfigError, match="model.pkl") as e:
        load_classifier(tmp_path / "m")
    assert str(tmp_path / "m") in str(e.value)
    (tmp_path / "m" / "classifier.json").write_text("{not json")
    with pytest.raises(ConfigError, match="unreadable"):
        load_classifier(tmp_path / "m")


def test_save_before_fit_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="before fit"):
        build_classifier("tfidf-svm").save(tmp_path)
