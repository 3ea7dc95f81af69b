"""Cross-fitting: folds by id, one policy for a fold that would lack a label, resumable fold files, routing
each item to the model that never saw it."""

from __future__ import annotations

from cfaug.training.crossfit import FoldModels, choose_folds, fold_of, training_part


class Memorise:
    """A 'model' that remembers the keys it was trained on."""

    def __init__(self, keys):
        self.keys = set(keys)


def _rows(n):
    keys = [f"r{i}" for i in range(n)]
    return keys, ["positive" if i % 2 else "negative" for i in range(n)]


def test_a_fold_depends_only_on_the_id():
    assert fold_of("abc", 5) == fold_of("abc", 5)
    assert {fold_of(f"r{i}", 5) for i in range(100)} == set(range(5))


def test_as_many_folds_as_the_labels_allow():
    keys, labels = _rows(40)
    assert choose_folds(keys, labels, 5) == 5
    assert choose_folds(keys[:2], labels[:2], 5) == 1  # two rows cannot be split
    k = choose_folds(keys[:6], labels[:6], 5)
    assert k == 1 or all({y for y, key in zip(labels[:6], keys[:6]) if fold_of(key, k) != f} ==
                         {"positive", "negative"} for f in range(k))
    # one negative: the fold holding it would train without it, unless every fold gets it anyway
    lopsided = ["positive"] * 19 + ["negative"]
    assert choose_folds(keys[:20], lopsided, 5) == 1
    assert choose_folds(keys[:20], lopsided, 5, always={"negative"}) == 5


def test_every_item_is_judged_by_a_model_that_never_saw_it(tmp_path):
    keys, labels = _rows(40)
    folds = FoldModels.fit(keys, labels, 5, lambda rows: Memorise(keys[n] for n in rows), tmp_path, "m-fold")
    assert folds.k == 5 and not folds.note
    for model, idx in folds.groups(keys):
        assert idx and not {keys[n] for n in idx} & model.keys
    assert all(key not in folds.model_for(key).keys for key in keys)
    assert sorted(len(training_part(keys, 5, f)) for f in range(5)) == sorted(40 - len(i) for _, i in folds.groups(keys))


def test_fold_files_are_saved_resumed_and_loaded_in_order(tmp_path):
    keys, labels = _rows(40)
    calls = []

    def train(rows):
        calls.append(len(rows))
        return Memorise(keys[n] for n in rows)

    FoldModels.fit(keys, labels, 3, train, tmp_path, "m-fold")
    assert len(calls) == 3 and sorted(p.name for p in tmp_path.iterdir()) == [f"m-fold{f}.pkl" for f in range(3)]
    (tmp_path / "m-fold2.pkl").unlink()  # a training killed before its last fold
    again = FoldModels.fit(keys, labels, 3, train, tmp_path, "m-fold")
    assert len(calls) == 4 and again.k == 3
    loaded = FoldModels.load(tmp_path, "m-fold")
    assert [m.keys for m in loaded.models] == [m.keys for m in again.models]
    assert FoldModels.load(tmp_path, "other-fold").k == 0


def test_a_fold_that_would_lack_a_label_is_noted_never_quiet(tmp_path):
    keys = [f"r{i}" for i in range(20)]
    lopsided = ["positive"] * 19 + ["negative"]
    folds = FoldModels.fit(keys, lopsided, 5, lambda rows: Memorise(rows), tmp_path, "m-fold")
    assert folds.k == 1
    assert "in 1 folds instead of 5" in folds.note and "19 'positive', 1 'negative'" in folds.note
    assert "one model trained on every row judges those same rows" in folds.note
    # asking for one fold is not a fallback: nothing to note
    assert not FoldModels.fit(keys, lopsided, 1, lambda rows: Memorise(rows), tmp_path, "one-fold").note


def test_fewer_folds_than_asked_are_noted():
    keys = [f"r{i}" for i in range(8)]
    labels = ["negative" if i in (0, 6) else "positive" for i in range(8)]  # 4 folds would leave one without
    folds = FoldModels.fit(keys, labels, 5, lambda rows: None, None, "")
    assert folds.k == 3 and "in 3 folds instead of 4" in folds.note and "one model" not in folds.note
