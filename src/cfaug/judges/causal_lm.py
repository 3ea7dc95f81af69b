"""A causal language model as a scorer: how likely a text, or the words around an edit, read.

* :func:`resolve_causal_lm`: the model folder a name stands for. A local Hugging Face folder is itself; a
  packaged GGUF model (``smollm2-135m-instruct``, ``gemma-3-270m``; :mod:`cfaug.packaged_models`) or a path to
  a ``.gguf`` file is converted once into a transformers folder in the model store,
  ``$CFAUG_MODEL_STORE/lm/<file stem>-<sha256 of the file, 16 hex>`` (weights de-quantized to float32; the
  ``gguf`` package reads the file). The folder is written under a temporary name beside its final one and
  renamed into place, so a killed conversion leaves no half folder; ``source.json`` in it names the file it
  came from. Nothing is downloaded: any other name gets an error.
* :class:`CausalLMScorer`: the model loaded once (on a GPU torch sees, else the CPU, unless ``device`` says).
  Settings, all recorded by :meth:`~CausalLMScorer.describe`: whether the tokenizer's BOS token (or, lacking one,
  its EOS token) is prepended (``add_bos``: with it the first token is predicted too; without it scoring starts at
  the second token), the window (``max_length``; a longer text is scored in consecutive windows with ``stride``
  tokens of fresh context each, as in the Hugging Face perplexity guide) and the batch size. Weights are float32:
  int8 dynamic quantization of the linear layers scored SmolLM2 about 1.5 times as fast on CPU but moved its token
  log-probabilities by 2.1 nats on average, so it is not offered. It gives

  - :meth:`~CausalLMScorer.token_nll`: a text's summed token negative log-likelihood (perplexity in
    :mod:`cfaug.evaluate.fluency`);
  - :meth:`~CausalLMScorer.token_logprobs`: each token's log-probability and character offsets, for many
    texts in padded batches (right padding, sorted by length), remembered by the text's sha1 (an LRU of
    ``cache_size`` texts) so a text scored again costs nothing;
  - :meth:`~CausalLMScorer.span_score`: the mean log-probability of a rewrite's tokens from its edit to the
    ``right_words``-th word after it, minus the same for the original around its own span (positive: the
    rewrite reads more likely there);
  - :meth:`~CausalLMScorer.relative_fluency`: whole-text mean token log-probability, rewrite minus original.

  :func:`load_scorer` keeps one scorer per process for the same arguments, so a method or filter that asks
  again gets the loaded model.
* :class:`LMFluencyJudge`: :meth:`~CausalLMScorer.relative_fluency` as a score judge of candidates (the
  ``lm-fluency.v1`` filter).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cfaug.data.io.atomic import atomic_dir
from cfaug.device import resolve_device
from cfaug.judges.base import Candidate
from cfaug.local_models import ModelPathError, quiet_transformers, resolve_local_model, weights_hash
from cfaug.packaged_models import PACKAGED, ModelFileError, looks_like_gguf, model_hash, resolve_gguf
from cfaug.training.store import default_store_dir

log = logging.getLogger(__name__)

#: the file in a converted model's folder that names the GGUF file it came from
SOURCE_FILE = "source.json"
#: what to install to convert a GGUF model
GGUF_INSTALL = "pip install gguf"
#: texts whose token scores a scorer remembers (least recently used go first)
DEFAULT_CACHE_SIZE = 4096

_WORD = re.compile(r"\S+")


def converted_dir(gguf: Path) -> Path:
    """Where the transformers folder converted from the GGUF file ``gguf`` lives:
    ``$CFAUG_MODEL_STORE/lm/<stem>-<sha16>``."""
    return default_store_dir() / "lm" / f"{gguf.stem}-{model_hash(gguf)}"


def convert_gguf(gguf: Path, name: str | None = None) -> Path:
    """The transformers folder converted from ``gguf`` (see the module docstring), converted now if it is
    not in the model store yet. ``name``: the packaged model's name, recorded in ``source.json``.
    :class:`~cfaug.packaged_models.ModelFileError` when the ``gguf`` package is missing."""
    import importlib.util

    target = converted_dir(gguf)
    if target.is_dir():
        return target
    if importlib.util.find_spec("gguf") is None:
        raise ModelFileError(f"reading the GGUF model {name or gguf} as a transformers model needs the gguf "
                             f"package: {GGUF_INSTALL} (or pip install 'cfaug[local-llm]')")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    quiet_transformers()
    log.info("converting %s into a transformers model at %s (once)", gguf, target)
    with atomic_dir(target) as tmp:
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                     local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        model.hf_quantizer = None  # de-quantized on load: saved as plain float32 weights
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source = {"gguf": str(gguf), "packaged": name, "sha256_16": model_hash(gguf),
                  "transformers": transformers.__version__}
        (tmp / SOURCE_FILE).write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")
    return target


def resolve_causal_lm(name: str | os.PathLike[str]) -> Path:
    """The transformers folder of the causal LM ``name`` names: a local folder is itself; a packaged GGUF
    model's name or a ``.gguf`` path gives its converted folder (converted once, :func:`convert_gguf`).
    Anything else raises :class:`~cfaug.local_models.ModelPathError` (a hub name among them: nothing is
    downloaded); a packaged model that is not installed, or a missing ``.gguf`` file,
    :class:`~cfaug.packaged_models.ModelFileError` saying what to install."""
    text = str(name)
    if not Path(text).expanduser().is_dir() and looks_like_gguf(text):
        return convert_gguf(resolve_gguf(text), text if text in PACKAGED else None)
    try:
        return resolve_local_model(name, "language model")
    except ModelPathError as exc:
        raise ModelPathError(f"{exc} A packaged GGUF model ({', '.join(PACKAGED)}) or a .gguf file also "
                             "works.") from None


@dataclass(frozen=True)
class TokenScores:
    """One text's scored tokens: each one's character span in the text (``offsets``, end exclusive) and
    natural-log probability given the tokens before it (``logprobs``). Without a BOS token the first token
    has no probability and is left out."""

    offsets: tuple[tuple[int, int], ...]
    logprobs: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.logprobs)

    def mean(self, start: int | None = None, end: int | None = None) -> float | None:
        """Mean log-probability of the tokens that overlap characters ``[start, end)`` (all tokens when both
        are None); None when no token does."""
        if start is None and end is None:
            picked = self.logprobs
        else:
            lo, hi = start or 0, math.inf if end is None else end
            picked = tuple(lp for (a, b), lp in zip(self.offsets, self.logprobs) if a < hi and b > lo)
        return sum(picked) / len(picked) if picked else None


class SpanRequest(NamedTuple):
    """One :meth:`CausalLMScorer.span_scores` request: an original, its rewrite, and the character spans
    ``(start, end)`` of the edit in each (an empty span where words were only inserted or deleted)."""

    original: str
    candidate: str
    orig_span: tuple[int, int]
    cand_span: tuple[int, int]


def span_region(text: str, span: tuple[int, int], right_words: int = 2) -> tuple[int, int]:
    """The characters a span score reads: from the span's start to the end of the ``right_words``-th
    whitespace-separated word that ends after the span (the rest of a word the span cuts counts as one), or
    to the end of the text when fewer follow."""
    start, end = span
    if right_words > 0:
        for k, m in enumerate(_WORD.finditer(text, end), start=1):
            end = m.end()
            if k == right_words:
                break
    return start, end


class CausalLMScorer:
    """Token log-probabilities of texts under a causal LM (see module docstring). ``path``: a local
    transformers folder, a packaged GGUF model's name or a ``.gguf`` path (:func:`resolve_causal_lm`)."""

    def __init__(self, path: str | os.PathLike[str], add_bos: bool = True, max_length: int = 1024,
                 stride: int = 512, device: str | None = None, batch_size: int = 8,
                 cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = resolve_causal_lm(path)
        self.device = resolve_device(device)
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(str(self.path), local_files_only=True)
        self.model.to(self.device).eval()
        limit = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None) or max_length
        self.max_length = min(max_length, int(limit))
        self.stride = max(1, min(stride, self.max_length - 1))
        self.batch_size = max(1, batch_size)
        start = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        if add_bos and start is None:
            raise ValueError(f"language model {self.path} has neither a BOS nor an EOS token to prepend; "
                             "pass add_bos=False")
        self.add_bos = add_bos
        self.start_id = start
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (start if start is not None else 0)  # masked: any id serves
        self.source: dict[str, Any] | None = None
        if (self.path / SOURCE_FILE).is_file():
            self.source = json.loads((self.path / SOURCE_FILE).read_text(encoding="utf-8"))
        self.cache_size = max(0, cache_size)
        self._cache: OrderedDict[str, TokenScores] = OrderedDict()
        self._lock = threading.Lock()
        self._weights_hash: str | None = None
        self._torch = torch

    def describe(self) -> dict[str, Any]:
        """The model and settings, for a result's provenance; ``source`` (the GGUF file, its packaged name
        and sha256) when the folder was converted from one."""
        tok = None
        if self.add_bos:
            tok = self.tokenizer.convert_ids_to_tokens(self.start_id)
        if self._weights_hash is None:
            self._weights_hash = weights_hash(self.path)
        out = {"model": str(self.path), "weights_sha256": self._weights_hash,
               "bos_prepended": self.add_bos, "bos_token": tok, "max_length": self.max_length,
               "stride": self.stride, "dtype": str(next(self.model.parameters()).dtype).replace("torch.", "")}
        if self.source is not None:
            out["source"] = self.source
        return out

    # -- one text, in windows -----------------------------------------------------------------------------

    def _window_nll(self, ids: Sequence[int]) -> Iterator[Any]:
        """Per window, the negative log-likelihoods (a tensor) of the tokens of ``ids`` first scored in it."""
        torch = self._torch
        prev_end = 0
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
                yield nll[-new:]
            prev_end = end
            if end == len(ids):
                break

    def token_nll(self, text: str) -> tuple[float, int]:
        """(sum of token NLLs in nats, number of scored tokens) for one text."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if self.add_bos:
            ids = [self.start_id, *ids]
        if len(ids) < 2:
            return 0.0, 0
        total, count = 0.0, 0
        for nll in self._window_nll(ids):
            total += float(nll.sum())
            count += len(nll)
        return total, count

    # -- many texts, in batches ---------------------------------------------------------------------------

    def token_logprobs(self, texts: Sequence[str]) -> list[TokenScores]:
        """Each text's tokens: character offsets and log-probabilities (:class:`TokenScores`). Texts not
        remembered from an earlier call are scored in padded batches of ``batch_size``; a text longer than
        ``max_length`` tokens is scored alone in windows, as :meth:`token_nll` does."""
        keys = [_text_key(t) for t in texts]
        found: dict[str, TokenScores] = {}
        todo: dict[str, str] = {}
        with self._lock:
            for k, t in zip(keys, texts):
                if k in found or k in todo:
                    continue
                hit = self._cache.get(k)
                if hit is not None:
                    self._cache.move_to_end(k)
                    found[k] = hit
                else:
                    todo[k] = t
        if todo:
            fresh = self._score(list(todo.values()))
            found.update(zip(todo, fresh))
            with self._lock:
                for k, s in zip(todo, fresh):
                    self._cache[k] = s
                    self._cache.move_to_end(k)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [found[k] for k in keys]

    def _encode(self, text: str) -> tuple[list[int], tuple[tuple[int, int], ...]]:
        """(ids with the start token when ``add_bos``, offsets of the tokens that get a probability)."""
        if not self.tokenizer.is_fast:
            raise ValueError(f"language model {self.path}: token offsets need a fast tokenizer (tokenizer.json)")
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        offsets = tuple((int(a), int(b)) for a, b in enc["offset_mapping"])
        if self.add_bos:
            return [self.start_id, *ids], offsets
        return ids, offsets[1:]

    def _score(self, texts: Sequence[str]) -> list[TokenScores]:
        torch = self._torch
        encoded = [self._encode(t) for t in texts]
        logprobs: list[list[float]] = [[] for _ in texts]
        short = []
        for i, (ids, _) in enumerate(encoded):
            if len(ids) < 2:
                continue
            if len(ids) > self.max_length:
                logprobs[i] = [-x for nll in self._window_nll(ids) for x in nll.tolist()]
            else:
                short.append(i)
        short.sort(key=lambda i: len(encoded[i][0]))
        for b in range(0, len(short), self.batch_size):
            rows = short[b:b + self.batch_size]
            width = len(encoded[rows[-1]][0])
            ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, i in enumerate(rows):
                seq = encoded[i][0]
                ids[r, :len(seq)] = torch.tensor(seq)
                mask[r, :len(seq)] = 1
            with torch.inference_mode():
                logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
                for r, i in enumerate(rows):
                    n = len(encoded[i][0])
                    row = logits[r, :n - 1].float()
                    target = ids[r, 1:n].to(row.device)
                    lp = row.gather(1, target[:, None])[:, 0] - torch.logsumexp(row, dim=-1)
                    logprobs[i] = lp.tolist()
        return [TokenScores(offsets, tuple(lp)) for (_, offsets), lp in zip(encoded, logprobs)]

    # -- what methods and filters ask ---------------------------------------------------------------------

    def span_score(self, original: str, candidate: str, orig_span: tuple[int, int], cand_span: tuple[int, int],
                   right_words: int = 2) -> float:
        """How much more likely the rewrite reads around its edit than the original around its own: the mean
        log-probability of ``candidate``'s tokens that overlap its :func:`span_region` (from ``cand_span``'s
        start to the ``right_words``-th word after it) minus the same for ``original`` over ``orig_span``.
        Positive: the rewrite reads more likely there. 0 for the same text. A region without scored tokens
        (an edit at the end, nothing after it) is read as the whole text; 0 when a text has no scored token
        at all."""
        return self.span_scores([SpanRequest(original, candidate, orig_span, cand_span)], right_words)[0]

    def span_scores(self, requests: Sequence[SpanRequest | tuple[str, str, tuple[int, int], tuple[int, int]]],
                    right_words: int = 2, per: str = "token") -> list[float]:
        """:meth:`span_score` of each ``(original, candidate, orig_span, cand_span)`` request; every distinct
        text is scored in one :meth:`token_logprobs` call. ``per="word"`` normalises each region's summed
        log-probability by its words instead of its tokens: a rare word split into several tokens (whose
        later pieces are easy to predict) then gains nothing from its length, which ranks alternatives for
        one slot as their probability does."""
        if per not in ("token", "word"):
            raise ValueError(f"per must be 'token' or 'word', not {per!r}")
        reqs = [SpanRequest(*r) for r in requests]
        texts = list(dict.fromkeys(t for r in reqs if r.original != r.candidate for t in (r.original, r.candidate)))
        scored = dict(zip(texts, self.token_logprobs(texts)))
        out = []
        for r in reqs:
            if r.original == r.candidate:
                out.append(0.0)
                continue
            after = _region_mean(scored[r.candidate], r.candidate, r.cand_span, right_words, per)
            before = _region_mean(scored[r.original], r.original, r.orig_span, right_words, per)
            out.append(0.0 if after is None or before is None else after - before)
        return out

    def relative_fluency(self, originals: Sequence[str], candidates: Sequence[str]) -> list[float]:
        """Whole-text mean token log-probability of each candidate minus its original's, in nats per token
        (positive: the candidate reads more likely); NaN where either text has no scored token."""
        if len(originals) != len(candidates):
            raise ValueError("relative_fluency needs as many originals as candidates")
        scores = self.token_logprobs([*originals, *candidates])
        out = []
        for o, c in zip(scores[:len(originals)], scores[len(originals):]):
            mo, mc = o.mean(), c.mean()
            out.append(float("nan") if mo is None or mc is None else mc - mo)
        return out


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _region_mean(scores: TokenScores, text: str, span: tuple[int, int], right_words: int,
                 per: str = "token") -> float | None:
    start, end = span_region(text, span, right_words)
    got = scores.mean(start, end)
    if got is None:
        start, end = 0, len(text)
        got = scores.mean()
    if per == "word" and got is not None:
        tokens = sum(1 for a, b in scores.offsets if a < end and b > start) or len(scores)
        words = len(_WORD.findall(text, start, end)) or 1
        got = got * tokens / words  # the region's summed log-probability per word
    return got


_SCORERS: dict[tuple[Any, ...], CausalLMScorer] = {}
_SCORERS_LOCK = threading.Lock()


def load_scorer(name: str | os.PathLike[str], **settings: Any) -> CausalLMScorer:
    """The :class:`CausalLMScorer` of ``name`` with ``settings`` (its keyword arguments), loaded once per
    process: the same arguments give the same instance, with its remembered scores."""
    key = (str(name), tuple(sorted(settings.items())))
    with _SCORERS_LOCK:
        scorer = _SCORERS.get(key)
        if scorer is None:
            scorer = _SCORERS[key] = CausalLMScorer(name, **settings)
        return scorer


class LMFluencyJudge:
    """Scores candidates by :meth:`CausalLMScorer.relative_fluency` of the edited field: mean token
    log-probability of the rewrite minus the original's (higher: the rewrite reads more likely)."""

    name = "lm_fluency"

    def __init__(self, scorer: CausalLMScorer) -> None:
        self.scorer = scorer

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        return np.asarray(self.scorer.relative_fluency([c.old_text for c in batch], [c.new_text for c in batch]),
                          dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, **self.scorer.describe()}


__all__ = ["CausalLMScorer", "LMFluencyJudge", "SpanRequest", "TokenScores", "convert_gguf", "converted_dir",
           "load_scorer", "resolve_causal_lm", "span_region"]
