import pytest

from cfaug.evaluate.downstream.classifiers import accuracy, build_classifier
from cfaug.judges.models import ModelPathError


def test_fine_tunes_a_local_tiny_bert(toy_data, tiny_bert, one_torch_thread):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("transformer", {"model": str(tiny_bert), "epochs": "5", "batch_size": "8",
                                           "learning_rate": "0.01", "max_length": "32", "device": "cpu"}, seed=0)
    info = clf.fit(x, y, dx, dy)
    assert 1 <= info["epoch"] <= 5
    assert accuracy(clf.predict(tx), ty) >= 0.9
    assert len(clf.describe()["weights_sha256"]) == 16


def test_needs_a_local_model():
    with pytest.raises(ValueError, match="model="):
        build_classifier("transformer")
    with pytest.raises(ModelPathError):
        build_classifier("transformer", {"model": "org/some-hub-model"})
