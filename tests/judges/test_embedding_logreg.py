"""The general embedding judge: logistic regression over the packaged MiniLM encoder's embeddings, with weights
shipped for that encoder; another encoder trains its own weights once, into the model store."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

from cfaug.judges import embedding_logreg
from cfaug.judges.embedding_logreg import EmbeddingJudge, general_embedding_judge

SHIPPED = json.loads((resources.files("cfaug.resources") / "sentiment" / embedding_logreg.WEIGHTS)
                     .read_text(encoding="utf-8"))
DIM = 384  # all-MiniLM-L6-v2


def no_training(encoder):
    raise AssertionError("the shipped weights should have been used")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The default judge, built afresh (not from this process's cache) with an empty model store and training
    forbidden; yields (judge, store)."""
    store = tmp_path_factory.mktemp("model-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CFAUG_MODEL_STORE", str(store))
        mp.setattr(embedding_logreg, "_LOADED", {})
        mp.setattr(embedding_logreg, "train_general", no_training)
        judge = general_embedding_judge()
    yield judge, store


def test_the_shipped_weights_are_those_of_the_packaged_encoder(shipped):
    judge, store = shipped
    assert len(SHIPPED["coef"]) == DIM and SHIPPED["labels"] == ["negative", "positive"]
    assert judge.encoder.describe()["weights_sha256"] == SHIPPED["encoder_sha256"]
    assert list(store.rglob("*")) == []  # nothing trained, nothing written
    facts = judge.describe()
    assert facts["judge"] == "minilm-logreg" and facts["train_rows"] == SHIPPED["train_rows"] == 20000
    assert facts["train_data_sha256"] == SHIPPED["train_data_sha256"]
    np.testing.assert_allclose(judge.coef[0], SHIPPED["coef"], rtol=1e-6)
    assert judge.intercept[0] == pytest.approx(SHIPPED["intercept"])


def test_it_reads_clear_sentences_right(shipped):
    judge, _ = shipped
    assert judge.labels == ("negative", "positive")
    probs = judge.predict_proba(["the food was wonderful", "the service was awful"])
    assert probs.shape == (2, 2)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert probs[0, 1] > 0.9 and probs[1, 0] > 0.9
    # token lists are read as their words joined
    np.testing.assert_allclose(judge.predict_proba([["the", "food", "was", "wonderful"]]), probs[:1], atol=1e-6)
    assert judge.predict_proba([]).shape == (0, 2)


class FakeEncoder:
    """Another encoder (other weights): every text is the same vector of ``DIM`` values."""

    path = "/nowhere/other-encoder"

    def __init__(self, value: float = 1.0) -> None:
        self.value = value
        self.encoded = 0

    def describe(self):
        return {"encoder": self.path, "weights_sha256": "0123456789abcdef"}

    def encode(self, texts):
        self.encoded += len(texts)
        return np.full((len(texts), DIM), self.value, dtype=np.float32)


def test_another_encoder_trains_its_weights_once_into_the_model_store(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path))
    monkeypatch.setattr(embedding_logreg, "_LOADED", {})
    calls = []

    def fake_train(encoder):
        calls.append(encoder)
        return {"labels": ["negative", "positive"], "coef": [0.01] * DIM, "intercept": -1.0,
                "encoder_sha256": encoder.describe()["weights_sha256"], "train_data": "fake", "train_rows": 4,
                "train_data_sha256": "f" * 64, "C": 4.0}

    monkeypatch.setattr(embedding_logreg, "train_general", fake_train)
    encoder = FakeEncoder()
    judge = general_embedding_judge(encoder=encoder)
    assert calls == [encoder]
    path = tmp_path / "judges" / "general-minilm-0123456789abcdef.json"
    assert path.is_file() and json.loads(path.read_text(encoding="utf-8"))["train_rows"] == 4
    assert judge.describe()["train_data"] == "fake" and judge.describe()["train_rows"] == 4
    # its weights, not the shipped ones: z = 384 * 0.01 - 1 = 2.84
    p = judge.predict_proba(["anything at all"])
    assert p[0, 1] == pytest.approx(1 / (1 + np.exp(-2.84)), rel=1e-5)
    # the same encoder again: this process's judge
    assert general_embedding_judge(encoder=encoder) is judge and len(calls) == 1
    # a new process (no judges loaded) reads the stored weights instead of training again
    monkeypatch.setattr(embedding_logreg, "_LOADED", {})
    again = general_embedding_judge(encoder=FakeEncoder())
    assert again is not judge and len(calls) == 1
    np.testing.assert_allclose(again.coef, judge.coef)


def test_a_judge_over_any_encoder_is_a_logistic_regression():
    judge = EmbeddingJudge(FakeEncoder(0.5), ["negative", "positive"], np.full(DIM, -0.02), np.array([1.0]))
    z = DIM * 0.5 * -0.02 + 1.0
    np.testing.assert_allclose(judge.predict_proba(["x", "y"])[:, 1], [1 / (1 + np.exp(-z))] * 2, rtol=1e-5)
