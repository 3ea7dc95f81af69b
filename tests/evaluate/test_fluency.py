import math

import pytest

from cfaug.evaluate.fluency import CausalLMScorer, ngram_perplexity, perplexity
from cfaug.judges.ngram_lm import NgramLM


@pytest.fixture(scope="module")
def uniform_lm(tiny_gpt2, tmp_path_factory):
    """The tiny GPT-2 with zeroed (tied) token embeddings: every next-token distribution is uniform."""
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    model = GPT2LMHeadModel.from_pretrained(tiny_gpt2)
    with torch.no_grad():
        model.get_output_embeddings().weight.zero_()
    out = tmp_path_factory.mktemp("uniform_lm")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_gpt2).save_pretrained(out)
    return out, model.config.vocab_size


def test_uniform_model_perplexity_is_vocabulary_size(uniform_lm):
    path, vocab = uniform_lm
    r = perplexity(["the film was good .", "bad"], CausalLMScorer(path))
    assert r.value == pytest.approx(vocab, rel=1e-4)
    assert r.details["corpus_perplexity"] == pytest.approx(vocab, rel=1e-4)
    assert r.details["tokens"] == 6  # BOS prepended: every word is predicted
    assert r.settings["bos_prepended"] is True and r.settings["bos_token"] == "<s>"


def test_without_bos_the_first_token_is_not_scored(uniform_lm):
    path, _ = uniform_lm
    scorer = CausalLMScorer(path, add_bos=False)
    assert scorer.token_nll("the film was good .")[1] == 4
    r = perplexity(["bad"], scorer)
    assert r.per_item == [None] and r.value is None
    assert r.settings["bos_prepended"] is False


def test_windows_score_every_token_once(uniform_lm, tiny_gpt2):
    path, vocab = uniform_lm
    text = " ".join(["the film was good ."] * 5)  # 25 words
    nll, n = CausalLMScorer(path, max_length=8, stride=3).token_nll(text)
    assert n == 25 and nll == pytest.approx(25 * math.log(vocab), rel=1e-4)
    # with one window the result equals a direct computation from the logits
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok, model = AutoTokenizer.from_pretrained(tiny_gpt2), GPT2LMHeadModel.from_pretrained(tiny_gpt2).eval()
    ids = [tok.bos_token_id, *tok("the plot was boring", add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, :-1], -1)
    expected = -sum(float(logp[i, ids[i + 1]]) for i in range(len(ids) - 1))
    got, count = CausalLMScorer(tiny_gpt2).token_nll("the plot was boring")
    assert count == 4 and got == pytest.approx(expected, rel=1e-4)


def test_ngram_fallback_is_labelled():
    lm = NgramLM(order=2).fit(["a b", "a c"])
    r = ngram_perplexity(["a b"], lm)
    assert r.name == "ngram_perplexity"
    assert r.value == pytest.approx((0.76 * 0.34 * 0.64) ** (-1 / 3))
    assert "fallback" in r.settings["model"]


def test_ngram_perplexity_beside_the_originals():
    from cfaug.evaluate.fluency import ngram_perplexity
    from cfaug.judges.ngram_lm import NgramLM

    lm = NgramLM(3).fit(["the food was great .", "the food was awful .", "the staff was great ."] * 5)
    res = ngram_perplexity(["the food was awful .", "food the was staff ."], lm,
                           originals=["the food was great .", "the food was great ."])
    d = res.details
    assert d["originals_perplexity"] < res.value  # the scrambled rewrite reads less like the reference
    assert d["ratio_to_original"] > 1
    assert res.per_item[0] == pytest.approx(d["originals_perplexity"], rel=0.5)


def test_default_fluency_uses_the_shipped_review_sentences_for_sentiment_only():
    from cfaug.evaluate.suite import GENERAL_REFERENCE, EvaluationConfig, general_sentences, ngram_reference_for

    cfg = EvaluationConfig()
    assert ngram_reference_for(cfg, "sentiment") == GENERAL_REFERENCE
    assert ngram_reference_for(cfg, "nli") is None
    assert ngram_reference_for(EvaluationConfig(ngram_reference="none"), "sentiment") is None
    assert len(general_sentences()) == 20000
