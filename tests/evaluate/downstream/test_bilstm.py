from cfaug.evaluate.downstream.classifiers import accuracy, build_classifier

PARAMS = {"embedding_dim": "16", "hidden_size": "16", "epochs": "5", "batch_size": "8", "learning_rate": "0.02",
          "device": "cpu"}


def test_bilstm_learns_the_toy_task_and_is_seeded(toy_data, one_torch_thread):
    (x, y), (dx, dy), (tx, ty) = toy_data
    clf = build_classifier("bilstm", PARAMS, seed=0)
    info = clf.fit(x, y, dx, dy)
    assert 1 <= info["epoch"] <= 5 and info["vocabulary"] > 10
    pred = clf.predict(tx)
    assert accuracy(pred, ty) >= 0.9
    again = build_classifier("bilstm", PARAMS, seed=0)
    again.fit(x, y, dx, dy)
    assert again.predict(tx) == pred
    assert clf.predict(["zzz unseen words only"])[0] in ("positive", "negative")
