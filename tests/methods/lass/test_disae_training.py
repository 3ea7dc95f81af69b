"""Training Dis-AE as a stage: saved, loaded back, resumable, and the reproduction it was trained for."""

from __future__ import annotations

import pytest
import torch

from cfaug.methods.lass.training import Pair, TrainSettings, load_disae, reproduce, train_disae
from cfaug.training.context import FitContext

NOUNS = ["pizza", "soup", "service", "staff", "pasta", "room", "screen", "battery", "keyboard", "price", "menu",
         "view"]
PAIRS = [Pair(p, n) for w in NOUNS for p, n in ((f"the {w} was good .", f"the {w} was bad ."),
                                                   (f"i loved the {w} .", f"i hated the {w} ."))]
SMALL = dict(embedding_dim=32, hidden_size=64, latent=32, dropout=0.0, batch_size=24, lr=1e-2, anneal_steps=100,
             min_count=1, grad_clip=None, dev_share=0.0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("disae")
    model, vocab, facts = train_disae(PAIRS, FitContext(artifact_dir=folder, progress=False),
                                      TrainSettings(epochs=100, **{**SMALL, "anneal_steps": 40}))
    return folder, model, vocab, facts


def test_training_records_its_facts_and_saves_the_model(trained):
    folder, model, vocab, facts = trained
    assert facts["pairs"] == facts["train_pairs"] == 24 and facts["dev_pairs"] == 0
    assert facts["epochs"] == 100 and facts["steps"] == 100  # one batch of 24 per epoch
    assert facts["anneal_steps"] == 40
    assert facts["parameters"] == sum(p.numel() for p in model.parameters())
    loaded, loaded_vocab = load_disae(folder)
    assert loaded_vocab.words == vocab.words
    trained_state = model.state_dict()
    assert set(trained_state) - set(loaded.state_dict()) == {"steps"}  # the step count is training state only
    for k, a in loaded.state_dict().items():
        assert torch.equal(a, trained_state[k]), k


def test_reproduction_swaps_the_sentiment_and_keeps_the_content(trained):
    folder, *_ = trained
    model, vocab = load_disae(folder)
    out = reproduce(model, vocab, ["the pizza was good .", "i loved the battery ."],
                    ["the soup was bad .", "the menu was bad ."], batch_size=1)
    assert out == ["the pizza was bad.", "i hated the battery."]
    with pytest.raises(ValueError, match="2 content parents but 1"):
        reproduce(model, vocab, ["a", "b"], ["c"])


class Killed(Exception):
    pass


def test_a_killed_training_resumes_to_the_same_model(tmp_path, monkeypatch):
    import cfaug.methods.lass.training as training

    settings = TrainSettings(epochs=4, **SMALL)
    straight, _, facts = train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "a", progress=False), settings)
    real_loop = training.train_loop

    def killed_after_two_epochs(*args, **kwargs):
        def on_epoch(epoch, model):
            if epoch == 3:  # the checkpoint of epoch 2 is on disk; epoch 3's is not written
                raise Killed()
        return real_loop(*args, **kwargs, on_epoch=on_epoch)

    monkeypatch.setattr(training, "train_loop", killed_after_two_epochs)
    with pytest.raises(Killed):
        train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "b", progress=False), settings)
    monkeypatch.setattr(training, "train_loop", real_loop)
    resumed, _, again = train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "b", progress=False), settings)
    assert again["resumed_from_epoch"] == 2 and again["steps"] == facts["steps"]
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), k


def test_held_out_pairs_choose_the_best_epoch(tmp_path):
    settings = TrainSettings(epochs=2, **{**SMALL, "dev_share": 0.25})
    _, _, facts = train_disae(PAIRS, FitContext(artifact_dir=tmp_path, progress=False), settings)
    assert facts["dev_pairs"] == 6 and facts["train_pairs"] == 18
    assert facts["best_epoch"] in (1, 2) and facts["dev_loss"] > 0


def test_too_few_pairs_and_a_missing_model_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="at least 2"):
        train_disae(PAIRS[:1], FitContext(artifact_dir=tmp_path, progress=False))
    with pytest.raises(FileNotFoundError, match="no trained Dis-AE"):
        load_disae(tmp_path)


def test_pairs_from_a_file_either_way_round(tmp_path):
    from cfaug.data.paired import read_pairs
    from cfaug.methods.lass.training import sentiment_pairs

    f = tmp_path / "p.tsv"
    f.write_text("Sentiment\tText\tbatch_id\nPositive\tA great film.\t1\nNegative\tAn awful film.\t1\n"
                 "neg\tDull plot.\t2\npos\tGripping plot.\t2\nneutral\tA plot.\t3\npositive\tA fine plot.\t3\n",
                 encoding="utf-8")
    pairs, left = sentiment_pairs(read_pairs(f).pairs)
    assert pairs == [Pair("A great film.", "An awful film."), Pair("Gripping plot.", "Dull plot.")] and left == 1


def test_pretraining_on_the_corpus_is_resumable_too(tmp_path, monkeypatch):
    import cfaug.methods.lass.training as training

    corpus = [(t, k) for p in PAIRS for t, k in ((p.positive, 1), (p.negative, 0))]
    settings = TrainSettings(epochs=2, pretrain_epochs=3, **SMALL)
    straight, _, facts = train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "a", progress=False), settings,
                                     corpus=corpus)
    assert facts["pretraining"]["texts"] == 48 and facts["pretraining"]["epochs"] == 3
    real_loop = training.train_loop

    def killed_in_pretraining(*args, **kwargs):
        def on_epoch(epoch, model):
            if kwargs.get("checkpoint") == "pretrain.pt" and epoch == 2:
                raise Killed()
        return real_loop(*args, **kwargs, on_epoch=on_epoch)

    monkeypatch.setattr(training, "train_loop", killed_in_pretraining)
    with pytest.raises(Killed):
        train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "b", progress=False), settings, corpus=corpus)
    monkeypatch.setattr(training, "train_loop", real_loop)
    resumed, _, again = train_disae(PAIRS, FitContext(artifact_dir=tmp_path / "b", progress=False), settings,
                                    corpus=corpus)
    assert again["pretraining"]["resumed_from_epoch"] == 1
    for (k, a), b in zip(straight.state_dict().items(), resumed.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), k
