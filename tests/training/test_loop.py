"""The shared training loop: the loss falls, a killed training resumes to the same weights, the best dev
epoch is kept and patience stops early."""

import pytest
import torch

from cfaug.training.context import FitContext
from cfaug.training.loop import CHECKPOINT, epoch_order, train_loop


def data(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return list(zip(x, y))


def make_model():
    torch.manual_seed(123)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 2))


def step(model, batch):
    x = torch.stack([b[0] for b in batch])
    y = torch.stack([b[1] for b in batch])
    return torch.nn.functional.cross_entropy(model(x), y)


def ctx(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    return FitContext(seed=7, progress=False, log=lambda m: None, artifact_dir=folder)


def accuracy(examples):
    def evaluate(model):
        x = torch.stack([b[0] for b in examples])
        y = torch.stack([b[1] for b in examples])
        return float((model(x).argmax(-1) == y).float().mean())
    return evaluate


def test_loss_falls_and_history_is_recorded(tmp_path):
    model = make_model()
    res = train_loop(model, data(), step, ctx(tmp_path, "a"), epochs=8, lr=1e-2, batch_size=16,
                     evaluate=accuracy(data(32, seed=1)))
    assert len(res.history) == 8 and res.history[-1]["loss"] < res.history[0]["loss"]
    assert res.best_score is not None and res.best_epoch is not None and "dev" in res.history[0]
    assert (tmp_path / "a" / CHECKPOINT).is_file() and res.facts()["epochs"] == 8


def test_killed_training_resumes_to_the_same_weights(tmp_path):
    full = make_model()
    train_loop(full, data(), step, ctx(tmp_path, "full"), epochs=5, lr=1e-2, batch_size=16)

    calls = {"n": 0}

    def dying_step(model, batch):
        calls["n"] += 1
        if calls["n"] == 4 * 3 + 2:  # in the middle of epoch 4 (4 batches per epoch)
            raise KeyboardInterrupt
        return step(model, batch)

    c = ctx(tmp_path, "killed")
    with pytest.raises(KeyboardInterrupt):
        train_loop(make_model(), data(), dying_step, c, epochs=5, lr=1e-2, batch_size=16)
    resumed = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                                  torch.nn.Linear(16, 2))  # different initial weights: all come from the checkpoint
    res = train_loop(resumed, data(), step, c, epochs=5, lr=1e-2, batch_size=16)
    assert res.resumed_from == 3 and len(res.history) == 5
    for a, b in zip(full.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)


def test_best_epoch_is_restored_and_patience_stops(tmp_path):
    scores = iter([0.5, 0.9, 0.6, 0.4, 0.3, 0.2])
    snapshots = {}

    def evaluate(model):
        score = next(scores)
        snapshots[score] = [p.detach().clone() for p in model.parameters()]
        return score

    model = make_model()
    res = train_loop(model, data(), step, ctx(tmp_path, "p"), epochs=6, lr=1e-2, batch_size=16,
                     evaluate=evaluate, patience=2)
    assert res.best_epoch == 2 and res.best_score == 0.9 and len(res.history) == 4
    for p, q in zip(model.parameters(), snapshots[0.9]):
        assert torch.equal(p, q)


def test_epoch_order_depends_on_seed_and_epoch_only():
    assert (epoch_order(10, 1, 2) == epoch_order(10, 1, 2)).all()
    assert not (epoch_order(10, 1, 2) == epoch_order(10, 1, 3)).all()


def test_no_examples_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no training examples"):
        train_loop(make_model(), [], step, ctx(tmp_path, "e"), epochs=1)


def test_bucketed_batches_cover_every_example_once_with_less_padding():
    import numpy as np

    from cfaug.training.loop import bucketed_batches, epoch_order

    rng = np.random.default_rng(0)
    lengths = list(rng.integers(1, 60, size=1000))
    order = epoch_order(1000, 0, 0)
    batches = bucketed_batches(order, lengths, 32, seed=0, epoch=0, window=10)
    assert sorted(int(i) for b in batches for i in b) == list(range(1000))
    assert all(len(b) <= 32 for b in batches)

    def padding(bs):
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in bs)

    plain = [order[k: k + 32] for k in range(0, 1000, 32)]
    assert padding(batches) < padding(plain) / 3
    again = bucketed_batches(order, lengths, 32, seed=0, epoch=0, window=10)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again))
    other = bucketed_batches(epoch_order(1000, 0, 1), lengths, 32, seed=0, epoch=1, window=10)
    assert any(not np.array_equal(a, b) for a, b in zip(batches, other))
