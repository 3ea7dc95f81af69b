from cfaug.classifiers import HELD_OUT, accuracy, build_classifier
from cfaug.nlp.tokens import tokenize

PARAMS = {"embedding_dim": "16", "filters": "8", "epochs": "5", "batch_size": "8", "learning_rate": "0.02",
          "device": "cpu"}


def test_cnn_learns_the_toy_task_and_is_seeded(toy_data, one_torch_thread, check_classifier):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("cnn", PARAMS, seed=0)
    assert clf.name == "cnn.v1" and clf.widths == (3, 4, 5)
    info = clf.fit(x, y, dx, dy)
    assert 1 <= info["epoch"] <= 5 and info["vocabulary"] > 10 and "dev" not in info
    pred = clf.predict(tx)
    assert accuracy(pred, ty) >= 0.9
    again = build_classifier("cnn", PARAMS, seed=0)
    again.fit(x, y, dx, dy)
    assert again.predict(tx) == pred
    # texts shorter than the widest filter, and texts without any token, are read too
    assert clf.predict(["good", "bad", ""])[:2] == ["positive", "negative"]
    check_classifier(clf, tx + ["", "good", "a bad one"])


def test_fit_without_dev_holds_out_a_tenth(toy3, one_torch_thread):
    (x, y), (tx, ty) = toy3
    clf = build_classifier("cnn", PARAMS, seed=2)
    info = clf.fit(x, y)
    assert info["dev"] == HELD_OUT and info["dev_rows"] == 6
    assert clf.labels == ("negative", "neutral", "positive")
    assert accuracy(clf.predict(tx), ty) >= 0.7  # 6 dev rows choose the epoch: the first perfect one wins


def test_ids_words_and_gradients(toy_data, one_torch_thread):
    import torch

    (x, y), (dx, dy), _ = toy_data
    clf = build_classifier("cnn", {**PARAMS, "epochs": "1", "max_tokens": "6"}, seed=0)
    clf.fit(x, y, dx, dy)
    text = "The GOOD film, zzz-unseen!"
    ids, words = clf.ids_and_words(text)
    assert words == tokenize(text)[:6] and len(ids) == len(words) == 6
    assert ids[words.index("good")] == clf.vocab["good"] and ids[words.index("zzz")] == 1
    short_ids, short_words = clf.ids_and_words("Good!")
    assert short_words == ["good", "!"] and len(short_ids) == 2
    # batch padding does not change the logits; gradients reach the embedding layer, one row per id
    for seq in (ids, short_ids):
        one = clf.logits(torch.tensor([seq]))
        padded = clf.logits(torch.tensor([seq + [clf.pad_id] * 7]))
        assert torch.allclose(one, padded, atol=1e-6)
    grads = []
    clf.embedding.register_forward_hook(lambda m, i, o: [o.register_hook(grads.append)] and None)
    out = clf.logits(torch.tensor([short_ids]))
    out[0, 1].backward()
    assert grads and grads[0].shape == (1, 2, 16) and grads[0].abs().sum() > 0
