import numpy as np
import pytest

from cfaug.classifiers import accuracy, build_classifier


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_svm_grid_search_on_a_dev_set_learns_the_toy_task(toy_data, toy_dev, check_classifier):
    (x, y), _, (tx, ty) = toy_data
    dx, dy = toy_dev  # a dev set of 50 rows or more is used as it is
    clf = build_classifier("tfidf-svm", {"c_grid": "0.01,1", "ngram_grid": "1"})
    info = clf.fit(x, y, dx, dy)
    assert info["selection"] == "dev set" and info["selection_rows"] == 60 and "dev" not in info
    assert info["C"] in (0.01, 1.0) and info["ngram_max"] == 1
    assert [g["C"] for g in info["grid_scores"]] == [0.01, 1.0]
    assert info["metric"] == "balanced accuracy" and info["score"] == max(g["score"] for g in info["grid_scores"])
    assert accuracy(clf.predict(tx), ty) == 1.0
    assert clf.describe()["classifier"] == "tfidf-svm.v1"
    check_classifier(clf, tx)


def test_logreg_without_a_dev_set_is_cross_validated_and_trained_on_every_row(toy_data, check_classifier):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("tfidf-logreg", seed=3)
    info = clf.fit(x, y)
    assert info["selection"] == "5-fold cross-validation" and info["selection_rows"] == 60
    assert info["C"] in (0.1, 1.0, 10.0, 100.0) and len(info["grid_scores"]) == 4
    assert clf.labels == ("negative", "positive")
    assert accuracy(clf.predict(tx), ty) >= 0.9
    # a dev set under 50 rows is too small to choose on: the training rows are cross-validated instead
    small = build_classifier("tfidf-logreg", seed=3).fit(x, y, dx, dy)
    assert small["selection"] == "5-fold cross-validation" and "20 rows are under 50" in small["selection_note"]
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
