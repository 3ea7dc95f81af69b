import pytest

from cfaug.classifiers import HELD_OUT, accuracy, build_classifier
from cfaug.local_models import ModelPathError

PARAMS = {"epochs": "5", "batch_size": "8", "learning_rate": "0.01", "max_length": "32", "device": "cpu"}


def test_fine_tunes_a_local_tiny_bert(toy_data, tiny_bert, one_torch_thread, check_classifier):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("transformer", {"model": str(tiny_bert), **PARAMS}, seed=0)
    info = clf.fit(x, y, dx, dy)
    assert 1 <= info["epoch"] <= 5 and "dev" not in info
    assert accuracy(clf.predict(tx), ty) >= 0.9
    assert len(clf.describe()["weights_sha256"]) == 16
    loaded = check_classifier(clf, tx)
    assert loaded.describe()["weights_sha256"] != clf.describe()["weights_sha256"]  # the fine-tuned weights

    import torch

    ids, words = loaded.ids_and_words("The GOOD film!")
    assert len(ids) == len(words) == 6 and words == ["", "the", "good", "film", "!", ""]
    assert ids[0] == loaded.tokenizer.cls_token_id
    out = loaded.logits(torch.tensor([ids]))
    padded = loaded.logits(torch.tensor([ids + [loaded.pad_id] * 3]))
    assert torch.allclose(out, padded, atol=1e-5)
    grads = []
    loaded.embedding.register_forward_hook(lambda m, i, o: [o.register_hook(grads.append)] and None)
    loaded.logits(torch.tensor([ids]))[0, 1].backward()
    assert grads and grads[0].shape[:2] == (1, 6) and grads[0].abs().sum() > 0


def test_fit_without_dev(toy_data, tiny_bert, one_torch_thread):
    (x, y), _, _ = toy_data
    clf = build_classifier("transformer", {"model": str(tiny_bert), **PARAMS, "epochs": "1"}, seed=0)
    info = clf.fit(x, y)
    assert info["dev"] == HELD_OUT and info["dev_rows"] == 6


def test_needs_a_local_model():
    with pytest.raises(ValueError, match="model="):
        build_classifier("transformer")
    with pytest.raises(ModelPathError):
        build_classifier("transformer", {"model": "org/some-hub-model"})
