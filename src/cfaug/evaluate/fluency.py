"""Fluency: perplexity of each counterfactual under a language model (lower = more fluent).

* :class:`~cfaug.judges.causal_lm.CausalLMScorer` (a part, so methods score with it too; imported here
  under its old name): a Hugging Face causal LM by local path, or a packaged GGUF model (``smollm2-135m-instruct``,
  ``gemma-3-270m``) or ``.gguf`` file converted once into the model store. Settings, all recorded: whether the
  tokenizer's BOS token (or, lacking one, its EOS token) is prepended (``add_bos``: with it, the first
  word is predicted too; without it, scoring starts at the second token), the window (``max_length``;
  longer texts are scored in consecutive windows with ``stride`` tokens of fresh context each, as in the
  Hugging Face perplexity guide), and the dtype. A text's perplexity is ``exp`` of its mean token
  negative log-likelihood; the metric's value is the mean of per-text perplexities (as most papers
  report), and ``details["corpus_perplexity"]`` is ``exp`` of the token-weighted mean NLL.
* :class:`~cfaug.judges.ngram_lm.NgramLM`: the offline fallback, an n-gram model trained on a
  reference corpus the user names; its result is named ``ngram_perplexity`` so it is never mistaken
  for a neural LM's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cfaug.evaluate.result import MetricResult, mean_of
from cfaug.judges.causal_lm import CausalLMScorer
from cfaug.judges.ngram_lm import NgramLM

__all__ = ["CausalLMScorer", "ngram_perplexity", "perplexity", "perplexity_result"]


def perplexity(texts: Sequence[str], scorer: CausalLMScorer) -> MetricResult:
    """Mean per-text perplexity under ``scorer``'s causal LM."""
    return perplexity_result([scorer.token_nll(t) for t in texts], scorer)


def perplexity_result(nlls: Sequence[tuple[float, int]], scorer: CausalLMScorer) -> MetricResult:
    """The ``perplexity`` result from per-text (NLL sum, scored tokens) pairs of :meth:`CausalLMScorer.token_nll`."""
    per_text: list[float | None] = []
    nll_sum, tok_sum = 0.0, 0
    for nll, n in nlls:
        per_text.append(math.exp(nll / n) if n else None)
        nll_sum, tok_sum = nll_sum + nll, tok_sum + n
    details = {"corpus_perplexity": math.exp(nll_sum / tok_sum) if tok_sum else None, "tokens": tok_sum}
    return MetricResult("perplexity", mean_of(per_text), len(nlls), scorer.describe(), per_item=per_text,
                        details=details, higher_is_better=False)


def ngram_perplexity(texts: Sequence[str], lm: NgramLM, originals: Sequence[str] | None = None) -> MetricResult:
    """Mean per-text perplexity under the offline n-gram model (labelled ``ngram_perplexity``). With
    ``originals`` (each text's original), ``details`` also holds their mean perplexity under the same model
    and ``ratio_to_original``, the mean of per-pair ratios (above 1: the rewrites read less like the
    reference text than their originals do)."""
    per_text: list[float | None] = []
    lp_sum, n_sum = 0.0, 0
    for t in texts:
        lp, n = lm.log_prob(t)
        per_text.append(math.exp(-lp / n))
        lp_sum, n_sum = lp_sum + lp, n_sum + n
    details: dict[str, Any] = {"corpus_perplexity": math.exp(-lp_sum / n_sum) if n_sum else None, "tokens": n_sum}
    if originals is not None:
        before = []
        for o in originals:
            lp, n = lm.log_prob(o)
            before.append(math.exp(-lp / n))
        details["originals_perplexity"] = mean_of(before)
        ratios = [a / b for a, b in zip(per_text, before) if a is not None and b]
        details["ratio_to_original"] = mean_of(ratios)
    return MetricResult("ngram_perplexity", mean_of(per_text), len(texts), lm.describe(), per_item=per_text,
                        details=details, higher_is_better=False)
