import numpy as np
import pytest

from cfaug.classifiers import HELD_OUT, accuracy, build_classifier


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_svm_grid_search_learns_the_toy_task(toy_data, check_classifier):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("tfidf-svm", {"c_grid": "0.01,1", "ngram_grid": "1"})
    info = clf.fit(x, y, dx, dy)
    assert info == {"C": info["C"], "ngram_max": 1, "dev_accuracy": info["dev_accuracy"]}  # no "dev" key
    assert info["C"] in (0.01, 1.0)
    assert info["dev_accuracy"] == accuracy(clf.predict(dx), dy)
    assert accuracy(clf.predict(tx), ty) == 1.0
    assert clf.describe()["classifier"] == "tfidf-svm.v1"
    check_classifier(clf, tx)


def test_logreg_learns_saves_and_holds_out_dev_data(toy_data, check_classifier):
    (x, y), _, (tx, ty) = toy_data
    clf = build_classifier("tfidf-logreg", seed=3)
    info = clf.fit(x, y)
    assert info["dev"] == HELD_OUT and info["dev_rows"] == 6 and info["C"] in (0.1, 1.0, 10.0, 100.0)
    assert clf.labels == ("negative", "positive")
    assert accuracy(clf.predict(tx), ty) >= 0.9
    check_classifier(clf, tx)


@pytest.mark.parametrize("name", ["tfidf-logreg", "tfidf-svm"])
def test_linear_model_reproduces_predict_proba(name, toy_data, toy3):
    (x, y), (dx, dy), (tx, _) = toy_data
    (x3, y3), (tx3, _) = toy3
    for train, labels, test in ((x, y, tx), (x3, y3, tx3)):
        clf = build_classifier(name, {"c_grid": "1,10"})
        clf.fit(train, labels)
        vec, W, b = clf.linear_model()
        assert W.shape == (len(clf.labels), len(vec.vocabulary_)) and b.shape == (len(clf.labels),)
        np.testing.assert_allclose(softmax(np.asarray(vec.transform(test) @ W.T) + b), clf.predict_proba(test),
                                   atol=1e-9)
