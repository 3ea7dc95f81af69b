"""Toy data and tiny models for the classifier tests (nothing is downloaded)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

FILLER = "the a film movie plot acting story it this was is and very".split()


def toy(n: int, seed: int, labels: tuple[str, ...] = ("positive", "negative"),
        cues: tuple[str, ...] = ("good", "bad")) -> tuple[list[str], list[str]]:
    """Sentences whose label is decided by one cue word (``good`` / ``bad``...) among random filler words."""
    rng = random.Random(seed)
    texts, out = [], []
    for i in range(n):
        k = i % len(labels)
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))]
        words.insert(rng.randrange(len(words) + 1), cues[k])
        texts.append(" ".join(words))
        out.append(labels[k])
    return texts, out


@pytest.fixture
def toy_data():
    """(train, dev, test): 60, 20 and 30 toy sentences."""
    return toy(60, 1), toy(20, 2), toy(30, 3)


@pytest.fixture
def toy_dev():
    """A toy dev set of 60 sentences, large enough to choose settings on."""
    return toy(60, 2)


@pytest.fixture
def toy3():
    """(train, test) of a three-label toy task (cues good / bad / okay)."""
    kw = {"labels": ("positive", "negative", "neutral"), "cues": ("good", "bad", "okay")}
    return toy(60, 4, **kw), toy(30, 5, **kw)


@pytest.fixture
def check_classifier(tmp_path):
    """``check_classifier(clf, texts)``: probabilities are well formed, predict is their argmax, and a
    saved and loaded copy predicts the same. Returns the loaded copy."""
    from cfaug.classifiers import load_classifier

    def check(clf, texts):
        probs = clf.predict_proba(texts)
        assert probs.shape == (len(texts), len(clf.labels))
        assert np.allclose(probs.sum(axis=1), 1.0) and (probs >= 0).all()
        assert clf.predict(texts) == [clf.labels[i] for i in probs.argmax(axis=1)]
        assert clf.predict([]) == [] and clf.predict_proba([]).shape == (0, len(clf.labels))
        folder = tmp_path / f"saved-{clf.name}"
        clf.save(folder)
        assert (folder / "classifier.json").is_file()
        again = load_classifier(folder)
        assert type(again) is type(clf) and again.labels == clf.labels
        if clf.name != "transformer.v1":  # a loaded transformer reads its model from the saved folder
            assert again.config == clf.config
        assert again.predict(texts) == clf.predict(texts)
        assert np.allclose(again.predict_proba(texts), probs, atol=1e-6)
        return again

    return check


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide random BERT encoder with a word-level vocabulary, saved as a local folder."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *FILLER, "good", "bad", "okay", "!", ","]
    path = tmp_path_factory.mktemp("tiny_bert")
    BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}, do_lower_case=True).save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(path)
    return path
