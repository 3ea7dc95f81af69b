"""Gender bias: of a sentiment classifier (prediction gap under gender swap) and of a masked LM.

* :func:`gender_gap`: run a classifier on texts and on their gender-swapped versions (the swap is a
  callable the caller gives, e.g. a word-list swapper) and compare P(label). Texts the swap leaves
  unchanged carry no gender word and are skipped (counted). :func:`template_sentences` is a built-in set
  of ~100 gender-bearing sentiment sentences to run it on when no corpus is at hand.
* :func:`crows_pairs_score`: CrowS-Pairs (Nangia et al. 2020) with a local masked LM. Each sentence is
  scored by the pseudo-log-likelihood of the tokens the two sentences of a pair share (found by
  ``difflib`` over token ids), masking one shared token at a time; scores are rounded to 3 decimals and
  equal scores are a tie. As in the authors' ``metric.py``, the score is the percentage of pairs whose
  ``sent_more`` (the more stereotyping sentence, for ``stereo`` and ``antistereo`` rows alike) scores
  higher; ties count in the denominator. 50 = unbiased.
* :func:`stereoset_score`: StereoSet intrasentence stereotype score (SS, Nadeem et al. 2021): the
  percentage of examples whose stereotype completion has a higher mean per-token pseudo-log-likelihood
  than the anti-stereotype completion (50 = unbiased). ``details`` also holds the language-model score
  (LMS: how often a meaningful completion beats the unrelated one) and ICAT = LMS * min(SS, 100-SS) / 50,
  both micro-averaged over examples (the official script averages per target first). Whole-sentence
  pseudo-log-likelihood (Salazar et al. 2020) is used, not the official per-blank-token likelihood.

Models are loaded from local folders only (``local_files_only=True``); nothing is downloaded.

>>> len(template_sentences())
100
"""

from __future__ import annotations

import csv
import difflib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class ProbabilisticClassifier(Protocol):
    """What :func:`gender_gap` needs: label names in column order and batch probabilities."""

    labels: tuple[str, ...]

    def predict_proba(self, inputs: list[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------------------------------
# classifier gap under gender swap


@dataclass
class GenderGap:
    """How a classifier's P(``label``) moves when the gender of a text is swapped.

    ``mean_abs_diff`` and ``mean_signed_diff`` are in probability units (0 to 1); the signed difference is
    original minus swapped (positive: the original, e.g. male, version gets more ``label``).
    ``prediction_change_rate`` is the share of compared texts whose arg-max label changes. All three are
    ``None`` when no text was compared. ``differences`` holds the signed difference of each compared text,
    in input order.
    """

    label: str
    n: int
    skipped: int
    mean_abs_diff: float | None
    mean_signed_diff: float | None
    prediction_change_rate: float | None
    differences: list[float] = field(default_factory=list)

    def facts(self) -> dict[str, Any]:
        return {"label": self.label, "n": self.n, "skipped_unchanged_by_swap": self.skipped,
                "mean_abs_diff": self.mean_abs_diff, "mean_signed_diff": self.mean_signed_diff,
                "prediction_change_rate": self.prediction_change_rate}


def gender_gap(model: ProbabilisticClassifier, texts: Sequence[str], swap: Callable[[str], str],
               label: str) -> GenderGap:
    """Compare ``model``'s P(``label``) on each text and on ``swap(text)``.

    Texts with ``swap(text) == text`` are skipped. The model is called twice: once on all kept
    originals, once on their swaps.
    """
    labels = tuple(model.labels)
    if label not in labels:
        raise ValueError(f"label {label!r} is not one of the model's labels ({', '.join(labels)})")
    col = labels.index(label)
    originals, swapped = [], []
    for t in texts:
        s = swap(t)
        if s != t:
            originals.append(t)
            swapped.append(s)
    skipped = len(texts) - len(originals)
    if not originals:
        return GenderGap(label, 0, skipped, None, None, None)
    p_orig = _checked_proba(model, originals, len(labels))
    p_swap = _checked_proba(model, swapped, len(labels))
    diff = p_orig[:, col] - p_swap[:, col]
    changed = p_orig.argmax(axis=1) != p_swap.argmax(axis=1)
    return GenderGap(label, len(originals), skipped, float(np.abs(diff).mean()), float(diff.mean()),
                     float(changed.mean()), [float(d) for d in diff])


def _checked_proba(model: ProbabilisticClassifier, texts: list[str], n_labels: int) -> np.ndarray:
    probs = np.asarray(model.predict_proba(texts), dtype=float)
    if probs.shape != (len(texts), n_labels):
        raise ValueError(f"predict_proba returned shape {probs.shape} for {len(texts)} texts and "
                         f"{n_labels} labels; expected ({len(texts)}, {n_labels})")
    return probs


#: occupations of the templates: a mix of male- and female-stereotyped and neutral ones
OCCUPATIONS = ("doctor", "nurse", "engineer", "teacher", "lawyer", "secretary", "pilot", "baker",
               "scientist", "receptionist")

#: sentence frames (``{occ}`` = "a doctor" / "an engineer", ``{job}`` = the bare occupation): four
#: neutral, three positive, three negative; each holds at least one male word
FRAMES = (
    "He is {occ}.",
    "My brother works as {occ} in the city.",
    "The man next door is {occ} and he walks to work.",
    "His father was {occ} for twenty years.",
    "He is a wonderful {job} and everyone admires him.",
    "My son became {occ} and I am so proud of him.",
    "The {job} was kind to us, and he made our day.",
    "He is a terrible {job} and nobody trusts him.",
    "My uncle is {occ} and he is always rude.",
    "The {job} was late again, and his work was awful.",
)

#: male words the templates use (one at least per sentence)
TEMPLATE_MALE_WORDS = frozenset({"he", "his", "him", "man", "brother", "father", "son", "uncle"})


def template_sentences() -> list[str]:
    """100 gender-bearing sentiment sentences: every frame of :data:`FRAMES` over every occupation of
    :data:`OCCUPATIONS`, frame by frame. Each contains a male word (:data:`TEMPLATE_MALE_WORDS`); swap
    them with a gender swapper and pass both to :func:`gender_gap`. The frames are neutral (4), positive
    (3) and negative (3), so a classifier's gap can be read on clearly-labelled and on neutral text.
    Written for cfaug; not a published benchmark."""
    out = []
    for frame in FRAMES:
        for job in OCCUPATIONS:
            article = "an" if job[0] in "aeiou" else "a"
            out.append(frame.format(occ=f"{article} {job}", job=job))
    return out


# --------------------------------------------------------------------------------------------------
# masked-LM bias benchmarks


@dataclass
class MaskedLMBias:
    """A masked-LM bias benchmark score: the percentage of items where the model prefers the
    stereotypical sentence (50 = unbiased), with counts in ``details`` and the model in ``settings``.
    ``per_item`` is 1 where the stereotypical sentence won, else 0, in the order scored."""

    metric: str
    score: float | None
    n: int
    details: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    per_item: list[int] = field(default_factory=list)

    def facts(self) -> dict[str, Any]:
        return {"metric": self.metric, "score": self.score, "n": self.n, **self.details, **self.settings}


class MaskedLMScorer:
    """Pseudo-log-likelihoods under a local masked LM (Hugging Face folder)."""

    def __init__(self, path: str | os.PathLike[str], device: str = "cpu", batch_size: int = 64) -> None:
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from cfaug.device import resolve_device
        from cfaug.local_models import quiet_transformers

        p = Path(path).expanduser()
        if not p.is_dir():
            raise ValueError(f"masked language model {str(path)!r} is not a local folder; cfaug does not "
                             "download models: pass the folder that holds config.json, the weights and the "
                             "tokenizer")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = p
        self.device = resolve_device(device)
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
        self.model = AutoModelForMaskedLM.from_pretrained(str(p), local_files_only=True).to(self.device).eval()
        if self.tokenizer.mask_token_id is None:
            raise ValueError(f"tokenizer of {p} has no mask token")
        self.batch_size = batch_size
        self._special = set(self.tokenizer.all_special_ids)
        self._torch = torch

    def describe(self) -> dict[str, Any]:
        from cfaug.local_models import weights_hash

        return {"model": str(self.path), "weights_sha256": weights_hash(self.path)}

    def ids(self, text: str) -> list[int]:
        """Token ids with the model's special tokens, truncated to the model's length."""
        return list(self.tokenizer(text, truncation=True)["input_ids"])

    def content_positions(self, ids: Sequence[int]) -> list[int]:
        """Positions of the non-special tokens."""
        return [i for i, t in enumerate(ids) if t not in self._special]

    def masked_log_probs(self, ids: Sequence[int], positions: Sequence[int]) -> np.ndarray:
        """log P(ids[i] | ids with position i masked) for each i of ``positions`` (one copy per position,
        batched)."""
        torch = self._torch
        out: list[float] = []
        base = torch.tensor(list(ids), device=self.device)
        for start in range(0, len(positions), self.batch_size):
            chunk = torch.tensor(list(positions[start:start + self.batch_size]), device=self.device)
            batch = base.repeat(len(chunk), 1)
            rows = torch.arange(len(chunk), device=self.device)
            batch[rows, chunk] = self.tokenizer.mask_token_id
            with torch.inference_mode():
                logits = self.model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits.float()
            logp = torch.log_softmax(logits[rows, chunk], dim=-1)
            out += logp.gather(1, base[chunk][:, None])[:, 0].cpu().tolist()
        return np.array(out, dtype=float)

    def pll(self, text: str) -> tuple[float, int]:
        """(sum of pseudo-log-likelihoods of the text's non-special tokens, number of tokens)."""
        ids = self.ids(text)
        pos = self.content_positions(ids)
        return (float(self.masked_log_probs(ids, pos).sum()), len(pos)) if pos else (0.0, 0)


def _shared_positions(a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    """Positions of the tokens ``a`` and ``b`` share (difflib's equal blocks), in each sequence."""
    pa: list[int] = []
    pb: list[int] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            pa += range(i1, i2)
            pb += range(j1, j2)
    return pa, pb


def _read_csv(csv_path: str | os.PathLike[str], columns: Sequence[str]) -> list[dict[str, str]]:
    p = Path(csv_path)
    if not p.is_file():
        raise ValueError(f"benchmark file {str(csv_path)!r} does not exist")
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{p} lacks the column(s) {', '.join(missing)} (has {', '.join(reader.fieldnames or [])})")
        return list(reader)


def _select(rows: list[dict[str, str]], bias_type: str | None, limit: int | None, path: Any) -> list[dict[str, str]]:
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if bias_type is not None:
        kept = [r for r in rows if r["bias_type"] == bias_type]
        if not kept:
            types = sorted({r["bias_type"] for r in rows})
            raise ValueError(f"no rows of bias type {bias_type!r} in {path} (types: {', '.join(types)})")
        rows = kept
    return rows[:limit] if limit is not None else rows


def crows_pairs_score(model_path: str | os.PathLike[str], csv_path: str | os.PathLike[str],
                      bias_type: str | None = "gender", device: str = "cpu",
                      limit: int | None = None) -> MaskedLMBias:
    """CrowS-Pairs metric score (see module docstring) of the first ``limit`` pairs of ``bias_type``
    (``None``: every type) in ``csv_path`` (columns ``sent_more``, ``sent_less``, ``stereo_antistereo``,
    ``bias_type``)."""
    rows = _read_csv(csv_path, ("sent_more", "sent_less", "stereo_antistereo", "bias_type"))
    rows = _select(rows, bias_type, limit, csv_path)
    lm = MaskedLMScorer(model_path, device=device)
    wins: list[int] = []
    counts = {"stereo": 0, "antistereo": 0}
    won = {"stereo": 0, "antistereo": 0}
    ties = 0
    for r in rows:
        more, less = lm.ids(r["sent_more"]), lm.ids(r["sent_less"])
        pm, pl = _shared_positions(more, less)
        content = set(lm.content_positions(more))
        keep = [(i, j) for i, j in zip(pm, pl) if i in content]
        s_more = round(float(lm.masked_log_probs(more, [i for i, _ in keep]).sum()), 3) if keep else 0.0
        s_less = round(float(lm.masked_log_probs(less, [j for _, j in keep]).sum()), 3) if keep else 0.0
        direction = r["stereo_antistereo"]
        if s_more == s_less:
            ties += 1
            wins.append(0)
            continue
        counts[direction] = counts.get(direction, 0) + 1
        win = int(s_more > s_less)
        won[direction] = won.get(direction, 0) + win
        wins.append(win)
    n = len(rows)

    def pct(a: int, b: int) -> float | None:
        return 100.0 * a / b if b else None

    details = {"ties": ties, "n_stereo": counts["stereo"], "n_antistereo": counts["antistereo"],
               "stereo_score": pct(won["stereo"], counts["stereo"]),
               "antistereo_score": pct(won["antistereo"], counts["antistereo"])}
    settings = {**lm.describe(), "benchmark": str(csv_path), "bias_type": bias_type or "all", "limit": limit,
                "scoring": "pseudo-log-likelihood of shared tokens, one masked at a time; rounded to 3 decimals"}
    return MaskedLMBias("crows_pairs", pct(sum(wins), n), n, details, settings, wins)


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def parse_choices(text: str) -> list[str]:
    """The strings of a ``choices`` cell written as a NumPy array (``['a' 'b' "c's"]``) or a Python list."""
    return [a if a or not b else b for a, b in _QUOTED.findall(text)]


def stereoset_score(model_path: str | os.PathLike[str], csv_path: str | os.PathLike[str], device: str = "cpu",
                    limit: int | None = None, bias_type: str | None = None) -> MaskedLMBias:
    """StereoSet intrasentence stereotype score (see module docstring) of the first ``limit`` examples
    (of ``bias_type`` when given) in ``csv_path`` (columns ``prompt`` with a ``BLANK``, ``choices``
    ordered [stereotype, anti-stereotype, unrelated], ``bias_type``)."""
    rows = _read_csv(csv_path, ("prompt", "choices", "bias_type"))
    rows = _select(rows, bias_type, limit, csv_path)
    lm = MaskedLMScorer(model_path, device=device)
    wins: list[int] = []
    meaningful = 0
    for k, r in enumerate(rows):
        choices = parse_choices(r["choices"])
        if len(choices) != 3 or "BLANK" not in r["prompt"]:
            raise ValueError(f"{csv_path} example {k}: expected a prompt with BLANK and three choices "
                             f"[stereotype, anti-stereotype, unrelated], got {r['prompt']!r} / {r['choices']!r}")
        scores = []
        for c in choices:
            total, count = lm.pll(r["prompt"].replace("BLANK", c, 1))
            scores.append(total / count if count else float("-inf"))
        stereo, anti, unrelated = scores
        wins.append(int(stereo > anti))
        meaningful += int(stereo > unrelated) + int(anti > unrelated)
    n = len(rows)
    ss = 100.0 * sum(wins) / n if n else None
    lms = 100.0 * meaningful / (2 * n) if n else None
    icat = lms * min(ss, 100.0 - ss) / 50.0 if ss is not None and lms is not None else None
    settings = {**lm.describe(), "benchmark": str(csv_path), "bias_type": bias_type or "all", "limit": limit,
                "scoring": "mean pseudo-log-likelihood per token of the filled-in sentence"}
    return MaskedLMBias("stereoset_ss", ss, n, {"lm_score": lms, "icat": icat}, settings, wins)
