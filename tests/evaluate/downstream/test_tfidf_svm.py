import pytest

from cfaug.evaluate.downstream.classifiers import accuracy, build_classifier
from cfaug.config import ConfigError
from cfaug.registry import RegistryError


def test_grid_search_learns_the_toy_task(toy_data):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("tfidf-svm", {"c_grid": "0.01,1", "ngram_grid": "1"})
    info = clf.fit(x, y, dx, dy)
    assert info["C"] in (0.01, 1.0) and info["ngram_max"] == 1
    assert info["dev_accuracy"] == accuracy(clf.predict(dx), dy)
    assert accuracy(clf.predict(tx), ty) == 1.0
    assert clf.describe()["classifier"] == "tfidf-svm.v1"


def test_unknown_classifier_or_parameter():
    with pytest.raises(RegistryError):
        build_classifier("naive-bayes")
    with pytest.raises(ConfigError, match="unknown parameter"):
        build_classifier("tfidf-svm", {"gamma": "1"})


def test_accuracy_hand_computed():
    assert accuracy(["a", "b", "a"], ["a", "a", "a"]) == pytest.approx(2 / 3)
