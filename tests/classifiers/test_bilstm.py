from cfaug.classifiers import HELD_OUT, accuracy, build_classifier
from cfaug.nlp.tokens import tokenize

PARAMS = {"embedding_dim": "16", "hidden_size": "16", "epochs": "5", "batch_size": "8", "learning_rate": "0.02",
          "device": "cpu"}


def test_bilstm_learns_the_toy_task_and_is_seeded(toy_data, one_torch_thread, check_classifier):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("bilstm", PARAMS, seed=0)
    info = clf.fit(x, y, dx, dy)
    assert 1 <= info["epoch"] <= 5 and info["vocabulary"] > 10 and "dev" not in info
    pred = clf.predict(tx)
    assert accuracy(pred, ty) >= 0.9
    again = build_classifier("bilstm", PARAMS, seed=0)
    again.fit(x, y, dx, dy)
    assert again.predict(tx) == pred
    assert clf.predict(["zzz unseen words only", ""])[0] in ("positive", "negative")
    check_classifier(clf, tx + ["", "good"])


def test_fit_without_dev_holds_out_a_tenth(toy_data, one_torch_thread):
    (x, y), _, (tx, ty) = toy_data
    clf = build_classifier("bilstm", {**PARAMS, "epochs": "3"}, seed=1)
    info = clf.fit(x, y)
    assert info["dev"] == HELD_OUT and info["dev_rows"] == 6


def test_ids_words_and_gradients(toy_data, one_torch_thread):
    import torch

    (x, y), (dx, dy), _ = toy_data
    clf = build_classifier("bilstm", {**PARAMS, "epochs": "1", "max_tokens": "6"}, seed=0)
    clf.fit(x, y, dx, dy)
    text = "The GOOD film, zzz-unseen!"
    ids, words = clf.ids_and_words(text)
    assert words == tokenize(text)[:6] and len(ids) == len(words) == 6
    assert ids[words.index("good")] == clf.vocab["good"] and ids[words.index("zzz")] == 1
    assert clf.ids_and_words("") == ([1], [""])
    # padding does not change the logits; gradients reach the embedding layer
    one = clf.logits(torch.tensor([ids]))
    padded = clf.logits(torch.tensor([ids + [clf.pad_id] * 4]))
    assert torch.allclose(one, padded, atol=1e-6)
    grads = []
    clf.embedding.register_forward_hook(lambda m, i, o: [o.register_hook(grads.append)] and None)
    one = clf.logits(torch.tensor([ids]))
    one[0, 0].backward()
    assert grads and grads[0].shape == (1, 6, 16) and grads[0].abs().sum() > 0
