"""Each text is encoded once across the encoder-based metrics of one evaluation."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest

from cfaug.evaluate.content import bertscore, embedding_cosine
from cfaug.evaluate.pairs import load_pairs
from cfaug.evaluate.suite import EvaluationConfig, evaluate
from cfaug.judges.similarity import SentenceEncoder
from cfaug.judges.token_embeddings import TokenEncoder

WINDOW = 12  #: the tiny sentence encoder's window in word pieces (special tokens included)

SHORT = [("1", "the film was good .", "the film was bad .", "positive", "negative"),
         ("2", "the plot was boring .", "the plot was fun .", "negative", "positive"),
         ("3", "i liked the acting", "i hated the acting", "positive", "negative")]
#: longer than WINDOW word pieces: the sentence encoder truncates them, so they need its own pass
LONG = [("4", "the film was good and the plot was fun and the acting was great , i liked it",
         "the film was bad and the plot was boring and the acting was awful , i hated it", "positive", "negative")]


def _sentence_encoder(tiny_bert, path, pooling: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from sentence_transformers import SentenceTransformer, models

    st = SentenceTransformer(modules=[models.Transformer(str(tiny_bert), max_seq_length=WINDOW),
                                      models.Pooling(32, pooling), models.Normalize()], device="cpu")
    st.save(str(path))
    return path


@pytest.fixture(scope="session")
def tiny_st(tiny_bert, tmp_path_factory):
    """A sentence-transformers folder: tiny_bert's transformer (window 12), mean pooling, normalised."""
    return _sentence_encoder(tiny_bert, tmp_path_factory.mktemp("tiny_st"), "mean")


@pytest.fixture(scope="session")
def tiny_st_cls(tiny_bert, tmp_path_factory):
    """The same transformer with [CLS] pooling: its embeddings cannot come from mean-pooled token vectors."""
    return _sentence_encoder(tiny_bert, tmp_path_factory.mktemp("tiny_st_cls"), "cls")


@pytest.fixture
def pairs(tmp_path, make_run_dir, make_row):
    rows = [make_row(i, o, n, a, b, method="m1.v1" if int(i) % 2 else "m2.v1") for i, o, n, a, b in SHORT + LONG]
    return load_pairs(make_run_dir(tmp_path / "run", rows))


@pytest.fixture
def encoder_calls(monkeypatch):
    """Counts, per text, how often each encoder's model read it."""
    from sentence_transformers import SentenceTransformer

    calls = {"token": Counter(), "sentence": Counter()}
    token_encode, sentence_encode = TokenEncoder._encode, SentenceTransformer.encode

    def count_token(self, texts):
        calls["token"].update(texts)
        return token_encode(self, texts)

    def count_sentence(self, texts, *args, **kwargs):
        calls["sentence"].update([texts] if isinstance(texts, str) else texts)
        return sentence_encode(self, texts, *args, **kwargs)

    monkeypatch.setattr(TokenEncoder, "_encode", count_token)
    monkeypatch.setattr(SentenceTransformer, "encode", count_sentence)
    return calls


def _texts(rows):
    return {t for _, o, n, _, _ in rows for t in (o, n)}


def test_each_text_is_encoded_once_across_metrics(pairs, tiny_st, encoder_calls):
    # a token window wider than the sentence encoder's: texts it truncates need the sentence encoder
    res = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st), token_encoder=str(tiny_st), precision="float32",
                                           token_window=512))
    data = _texts(SHORT + LONG)  # (the encoders may also read a probe sentence or two)
    token = {t: c for t, c in encoder_calls["token"].items() if t in data}
    sentence = {t: c for t, c in encoder_calls["sentence"].items() if t in data}
    assert token == {t: 1 for t in _texts(SHORT + LONG)}  # once, though three groups use them
    # the sentence encoder reads only the texts it would truncate; the others come from the token pass
    assert sentence == {t: 1 for t in _texts(LONG)}
    assert res["encoding"]["sentence_embeddings_from_token_pass"] == len(_texts(SHORT))
    assert list(res["groups"]) == ["m1.v1", "m2.v1", "(all)"]

    # the same numbers as each metric encoding on its own
    every = pairs.pairs
    orig, new = [p.original for p in every], [p.counterfactual for p in every]
    alone_cos = embedding_cosine(orig, new, SentenceEncoder(tiny_st))
    alone_bert = bertscore(orig, new, TokenEncoder(tiny_st, max_length=512))
    got = res["groups"]["(all)"]["per_item"]
    assert np.allclose(got["embedding_cosine"], alone_cos.per_item, atol=1e-5)
    assert np.allclose(got["bertscore_f1"], alone_bert.per_item, atol=1e-6)
    by = {m["name"]: m for m in res["groups"]["(all)"]["metrics"]}
    assert by["embedding_cosine"]["signature"] == alone_cos.signature
    assert by["bertscore_f1"]["signature"] == alone_bert.signature


def test_equal_windows_share_every_text(pairs, tiny_st, encoder_calls):
    res = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st), token_encoder=str(tiny_st), precision="float32",
                                           token_window=WINDOW))
    data = _texts(SHORT + LONG)
    assert not [t for t in encoder_calls["sentence"] if t in data]  # long texts too: their first window
    assert res["encoding"]["sentence_embeddings_from_token_pass"] == len(data)
    every = pairs.pairs
    orig, new = [p.original for p in every], [p.counterfactual for p in every]
    alone_cos = embedding_cosine(orig, new, SentenceEncoder(tiny_st))
    alone_bert = bertscore(orig, new, TokenEncoder(tiny_st, max_length=WINDOW))
    got = res["groups"]["(all)"]["per_item"]
    assert np.allclose(got["embedding_cosine"], alone_cos.per_item, atol=1e-5)
    assert np.allclose(got["bertscore_f1"], alone_bert.per_item, atol=1e-6)


def test_bfloat16_is_recorded_close_and_still_shared(pairs, tiny_st, encoder_calls):
    exact = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st), token_encoder=str(tiny_st), precision="float32",
                                             token_window=WINDOW))
    fast = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st), token_encoder=str(tiny_st), precision="bfloat16",
                                            token_window=WINDOW))
    assert fast["encoding"]["sentence_embeddings_from_token_pass"] == len(_texts(SHORT + LONG))
    for name in ("embedding_cosine", "bertscore_f1"):
        by = {m["name"]: m for m in fast["groups"]["(all)"]["metrics"]}
        assert by[name]["settings"]["precision"] == "bfloat16"
        assert by[name]["signature"] != {m["name"]: m for m in exact["groups"]["(all)"]["metrics"]}[name]["signature"]
        a = np.array(fast["groups"]["(all)"]["per_item"][name])
        b = np.array(exact["groups"]["(all)"]["per_item"][name])
        assert np.allclose(a, b, atol=2e-2) and not np.array_equal(a, b)


def test_no_sharing_when_the_sentence_encoder_pools_otherwise(pairs, tiny_st_cls, tiny_bert, encoder_calls):
    res = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st_cls), token_encoder=str(tiny_bert), precision="float32"))
    assert res["encoding"]["sentence_embeddings_from_token_pass"] == 0
    assert "mean pooling" in res["encoding"]["not_shared_because"]
    data = _texts(SHORT + LONG)
    sentence = {t: c for t, c in encoder_calls["sentence"].items() if t in data}
    assert sentence == {t: 1 for t in data}
    every = pairs.pairs
    alone = embedding_cosine([p.original for p in every], [p.counterfactual for p in every],
                             SentenceEncoder(tiny_st_cls))
    assert np.allclose(res["groups"]["(all)"]["per_item"]["embedding_cosine"], alone.per_item, atol=1e-6)


def test_timings_name_the_stages(pairs, tiny_st):
    res = evaluate(pairs, EvaluationConfig(encoder=str(tiny_st), token_encoder=str(tiny_st)))
    for stage in ("load models", "encode: token vectors", "encode: sentence embeddings", "self_bleu", "edit_rate"):
        assert res["timings"][stage] >= 0
