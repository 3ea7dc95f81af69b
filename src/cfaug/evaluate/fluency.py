"""Fluency: perplexity of each counterfactual under a language model (lower = more fluent).

* :class:`CausalLMScorer`: a Hugging Face causal LM by local path. Settings, all recorded: whether the
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
import os
from collections.abc import Sequence
from typing import Any

from cfaug.judges.ngram_lm import NgramLM
from cfaug.evaluate.result import MetricResult, mean_of
from cfaug.device import resolve_device
from cfaug.local_models import quiet_transformers, resolve_local_model, weights_hash


class CausalLMScorer:
    """Token negative log-likelihoods of texts under a local causal LM (see module docstring)."""

    def __init__(self, path: str | os.PathLike[str], add_bos: bool = True, max_length: int = 1024,
                 stride: int = 512, device: str | None = None, batch_size: int = 8) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = resolve_local_model(path, "language model")
        self.device = resolve_device(device)
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(str(self.path), local_files_only=True)
        self.model.to(self.device).eval()
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None) or max_length
        self.max_length = min(max_length, int(limit))
        self.stride = max(1, min(stride, self.max_length - 1))
        self.batch_size = batch_size
        start = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        if add_bos and start is None:
            raise ValueError(f"language model {self.path} has neither a BOS nor an EOS token to prepend; "
                             "pass add_bos=False")
        self.add_bos = add_bos
        self.start_id = start
        self._torch = torch

    def describe(self) -> dict[str, Any]:
        tok = None
        if self.add_bos:
            tok = self.tokenizer.convert_ids_to_tokens(self.start_id)
        return {"model": str(self.path), "weights_sha256": weights_hash(self.path),
                "bos_prepended": self.add_bos, "bos_token": tok, "max_length": self.max_length,
                "stride": self.stride, "dtype": str(next(self.model.parameters()).dtype).replace("torch.", "")}

    def token_nll(self, text: str) -> tuple[float, int]:
        """(sum of token NLLs in nats, number of scored tokens) for one text."""
        torch = self._torch
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if self.add_bos:
            ids = [self.start_id, *ids]
        if len(ids) < 2:
            return 0.0, 0
        total, count, prev_end = 0.0, 0, 0
        for begin in range(0, len(ids), self.stride):
            end = min(begin + self.max_length, len(ids))
            window = torch.tensor([ids[begin:end]], device=self.device)
            new = end - max(prev_end, begin + 1)  # tokens first scored in this window
            with torch.inference_mode():
                logits = self.model(window).logits.float()[0]
            logp = torch.log_softmax(logits[:-1], dim=-1)
            target = window[0, 1:]
            nll = -logp.gather(1, target[:, None])[:, 0]
            if new > 0:
                total += float(nll[-new:].sum())
                count += new
            prev_end = end
            if end == len(ids):
                break
        return total, count


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
