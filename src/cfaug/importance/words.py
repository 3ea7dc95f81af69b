"""Word importance: which words of a text push a classifier toward a label.

Three registered attribution methods, each wrapping a well-kept library:

* ``lime.v1``: LIME (the ``lime`` package's text explainer, bag of words): a sparse linear model fitted to
  the classifier's answers on texts with random subsets of word types removed. Any classifier with
  ``predict_proba``.
* ``integrated-gradients.v1``: Integrated Gradients (Captum). Torch classifiers (``embedding``,
  ``ids_and_words``, ``logits``) are attributed on their input embeddings (Captum's
  ``LayerIntegratedGradients``): the word-level models with an all-``UNK`` baseline (padding stays
  padding), transformers -- fine-tuned by cfaug or a Hugging Face classifier given by path -- with the
  baseline of their ``baseline_ids`` (special tokens kept, padding elsewhere), a word's attribution the sum
  over its word pieces. TF-IDF linear models are attributed on their TF-IDF vector with a zero baseline, a
  bigram feature's share split evenly between its two words.
* ``shapley.v1``: Shapley value sampling (Captum) over word types: a feature is every occurrence of one
  candidate word type, absent means removed from the text. Any classifier with ``predict_proba``.

A *word* is a lower-cased token of :func:`cfaug.nlp.tokens.tokenize`; scores are summed over the
occurrences of a word type. Only *candidate* words are ranked: alphabetic words, without stop words unless
``stopwords=True`` (negators such as *not* and *never* always count, since they carry sentiment). Every
method returns, for each text, :class:`WordScores` for its candidate word types, positive = supports the
label's column.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cfaug.config import ConfigError, build_config, param
from cfaug.nlp.tokens import tokenize
from cfaug.registry import Registry, spec_name

#: words kept as candidates although they are stop words
KEEP = frozenset({"not", "no", "never", "nothing", "nor", "none", "nobody", "neither", "cannot", "n't", "without"})


@dataclass
class WordScores:
    """Attributions of one text's candidate word types (first-occurrence order)."""

    words: list[str]
    scores: np.ndarray

    def top(self, k: int) -> list[str]:
        """The ``k`` words that support the label most (positive scores only), best first; ties keep
        text order."""
        order = np.argsort(-self.scores, kind="stable")
        return [self.words[i] for i in order[:k] if self.scores[i] > 0]


@dataclass
class Words:
    """A text cut into tokens, with its candidate word types."""

    tokens: list[str]
    types: list[str]  #: candidate word types, first-occurrence order

    def text_without(self, keep: Sequence[bool] | np.ndarray) -> str:
        """The text (tokens joined by spaces) with the candidate types whose flag is False removed."""
        drop = {w for w, k in zip(self.types, keep) if not k}
        return " ".join(t for t in self.tokens if t not in drop)


def candidate_words(text: str, stopwords: bool = False) -> Words:
    """Tokens of ``text`` and its candidate word types (see the module docstring)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    tokens = tokenize(text)
    markup = "<br" in text.lower()
    types: dict[str, None] = {}
    for t in tokens:
        if not any(ch.isalpha() for ch in t) or (markup and t == "br"):
            continue
        if not stopwords and t in ENGLISH_STOP_WORDS and t not in KEEP:
            continue
        types.setdefault(t, None)
    return Words(tokens, list(types))


class WordImportance:
    """Base class: ``explain(model, texts, columns)`` gives one :class:`WordScores` per text."""

    name = "word-importance"

    def __init__(self, config: Any) -> None:
        self.config = config

    def explain(self, model: Any, texts: Sequence[str], columns: Sequence[int], seed: int = 0) -> list[WordScores]:
        raise NotImplementedError

    def check(self, model: Any) -> None:
        """Raise :class:`~cfaug.config.ConfigError` when this method cannot explain ``model`` at all (so a
        run stops before its first text instead of failing on every one)."""

    def describe(self) -> dict[str, Any]:
        import dataclasses

        return {"method": self.name, **dataclasses.asdict(self.config)}


# -- LIME --------------------------------------------------------------------------------------------
@dataclass
class LimeConfig:
    samples: int = param(300, "perturbed texts per explanation (the lime package's num_samples)", min=10)
    stopwords: bool = param(False, "rank stop words too")


class LimeImportance(WordImportance):
    name = "lime"

    def explain(self, model: Any, texts: Sequence[str], columns: Sequence[int], seed: int = 0) -> list[WordScores]:
        from lime.lime_text import LimeTextExplainer

        out = []
        for text, col in zip(texts, columns):
            words = candidate_words(text, self.config.stopwords)
            if not words.types:
                out.append(WordScores([], np.zeros(0)))
                continue
            explainer = LimeTextExplainer(class_names=list(model.labels), bow=True, split_expression=r"\s+",
                                          random_state=text_seed(seed, text))
            exp = explainer.explain_instance(" ".join(words.tokens), model.predict_proba, labels=(col,),
                                             num_features=len(set(words.tokens)), num_samples=self.config.samples)
            weights = {str(w): float(v) for w, v in exp.as_list(label=col)}
            out.append(WordScores(words.types, np.array([weights.get(w, 0.0) for w in words.types])))
        return out


def text_seed(seed: int, text: str) -> int:
    """The random seed of one text's explanation: from ``seed`` and the text alone, so a text is explained
    the same way whatever else is in its batch (a resumed run, another batch size)."""
    return (seed * 1_000_003 + zlib.crc32(text.encode("utf-8", "surrogatepass"))) % 2 ** 32


# -- Shapley value sampling --------------------------------------------------------------------------
@dataclass
class ShapleyConfig:
    samples: int = param(3, "random permutations of the word types (Captum's n_samples)", min=1)
    batch: int = param(64, "perturbed texts scored per classifier call", min=1)
    stopwords: bool = param(False, "rank stop words too")


class ShapleyImportance(WordImportance):
    name = "shapley"

    def explain(self, model: Any, texts: Sequence[str], columns: Sequence[int], seed: int = 0) -> list[WordScores]:
        import torch
        from captum.attr import ShapleyValueSampling

        out = []
        for text, col in zip(texts, columns):
            words = candidate_words(text, self.config.stopwords)
            if not words.types:
                out.append(WordScores([], np.zeros(0)))
                continue

            def forward(masks: torch.Tensor, words: Words = words, col: int = col) -> torch.Tensor:
                batch = [words.text_without(m > 0.5) for m in masks.detach().cpu().numpy()]
                return torch.as_tensor(model.predict_proba(batch)[:, col], dtype=torch.float64)

            torch.manual_seed(seed)
            inputs = torch.ones((1, len(words.types)), dtype=torch.float64)
            attr = ShapleyValueSampling(forward).attribute(
                inputs, baselines=torch.zeros_like(inputs), n_samples=self.config.samples,
                perturbations_per_eval=self.config.batch, show_progress=False)
            out.append(WordScores(words.types, attr[0].detach().cpu().numpy().astype(float)))
        return out


# -- Integrated gradients ------------------------------------------------------------------------------
@dataclass
class IGConfig:
    steps: int = param(20, "steps of the path integral (Captum's n_steps)", min=2)
    stopwords: bool = param(False, "rank stop words too")


class IntegratedGradients(WordImportance):
    name = "integrated-gradients"

    def explain(self, model: Any, texts: Sequence[str], columns: Sequence[int], seed: int = 0) -> list[WordScores]:
        self.check(model)
        if hasattr(model, "linear_model"):
            return self._linear(model, texts, columns)
        return self._embedding(model, texts, columns)

    def check(self, model: Any) -> None:
        if not hasattr(model, "linear_model") and not (hasattr(model, "embedding") and hasattr(model, "ids_and_words")):
            raise ConfigError(f"integrated gradients needs a model with gradients; {getattr(model, 'name', model)!r} "
                              "is neither a torch classifier (cfaug's or a Hugging Face sequence classifier) nor a "
                              "TF-IDF linear model (use lime or shapley for it)")

    def _embedding(self, model: Any, texts: Sequence[str], columns: Sequence[int]) -> list[WordScores]:
        import torch
        from captum.attr import LayerIntegratedGradients

        lig = LayerIntegratedGradients(lambda ids: torch.softmax(model.logits(ids), dim=-1), model.embedding)
        pad, unk = int(model.pad_id), int(getattr(model, "unk_id", 1))
        out = []
        for text, col in zip(texts, columns):
            words = candidate_words(text, self.config.stopwords)
            ids, pos_words = model.ids_and_words(text)
            if not words.types or not ids:
                out.append(WordScores(words.types, np.zeros(len(words.types))))
                continue
            x = torch.tensor([ids], dtype=torch.long, device=_device_of(model))
            if hasattr(model, "baseline_ids"):
                base = model.baseline_ids(x)
            else:
                base = torch.where(x == pad, x, torch.full_like(x, unk))
            attr = lig.attribute(x, baselines=base, target=int(col), n_steps=self.config.steps,
                                 internal_batch_size=self.config.steps)
            per_pos = attr.sum(dim=-1)[0].detach().cpu().numpy()
            out.append(_by_type(words, zip(pos_words, per_pos)))
        return out

    def _linear(self, model: Any, texts: Sequence[str], columns: Sequence[int]) -> list[WordScores]:
        import torch
        from captum.attr import IntegratedGradients as CaptumIG

        vec, W, b = model.linear_model()
        names = _feature_names(vec)
        X = vec.transform(list(texts)).tocsr()
        used = np.unique(X.indices)  # one Captum call for the batch, over the features it uses
        if not len(used):
            return [WordScores(ws.types, np.zeros(len(ws.types)))
                    for ws in (candidate_words(t, self.config.stopwords) for t in texts)]
        Wt = torch.as_tensor(W[:, used], dtype=torch.float64)
        bt = torch.as_tensor(b, dtype=torch.float64)
        x = torch.as_tensor(X[:, used].toarray(), dtype=torch.float64)
        attr = CaptumIG(lambda z: torch.softmax(z @ Wt.T + bt, dim=-1)).attribute(
            x, baselines=torch.zeros_like(x), target=[int(c) for c in columns], n_steps=self.config.steps,
            internal_batch_size=max(1, 4096 // max(1, len(texts))) * len(texts)).detach().numpy()
        out = []
        for r, text in enumerate(texts):
            words = candidate_words(text, self.config.stopwords)
            row = X.getrow(r)
            pos = np.searchsorted(used, row.indices)
            pairs = []
            for j, a in zip(row.indices, attr[r, pos]):
                parts = str(names[j]).split()
                pairs += [(p, a / len(parts)) for p in parts]
            out.append(_by_type(words, pairs))
        return out


_NAMES: dict[int, tuple[Any, np.ndarray]] = {}


def _feature_names(vec: Any) -> np.ndarray:
    """The vectorizer's feature names, computed once per vectorizer (building them is slow)."""
    hit = _NAMES.get(id(vec))
    if hit is None or hit[0] is not vec:
        hit = _NAMES[id(vec)] = (vec, vec.get_feature_names_out())
    return hit[1]


def _device_of(model: Any) -> Any:
    try:
        return next(model.net.parameters()).device
    except (AttributeError, StopIteration):
        return "cpu"


def _by_type(words: Words, pairs: Any) -> WordScores:
    """Sum (word, score) pairs per candidate type."""
    index = {w: i for i, w in enumerate(words.types)}
    scores = np.zeros(len(words.types))
    for w, s in pairs:
        i = index.get(w)
        if i is not None:
            scores[i] += float(s)
    return WordScores(words.types, scores)


WORD_IMPORTANCE: Registry[tuple[type, Callable[[Any], WordImportance]]] = Registry("word importance")
WORD_IMPORTANCE.register("lime.v1", "LIME (lime package): sparse linear fit to answers on texts with random word "
                         "types removed; any classifier")((LimeConfig, LimeImportance))
WORD_IMPORTANCE.register("integrated-gradients.v1", "Integrated Gradients (Captum) on input embeddings or the "
                         "TF-IDF vector; torch (also Hugging Face) and TF-IDF linear classifiers"
                         )((IGConfig, IntegratedGradients))
WORD_IMPORTANCE.register("shapley.v1", "Shapley value sampling (Captum) over word types, absent = removed; any "
                         "classifier")((ShapleyConfig, ShapleyImportance))


def build_word_importance(spec: str | Mapping[str, Any]) -> WordImportance:
    """The word-importance method described by ``spec`` (``"lime"`` or ``{"@importance": "lime", "samples": 500}``)."""
    name, params = spec_name(spec, "importance")
    config_cls, cls = WORD_IMPORTANCE.get(name)
    return cls(build_config(config_cls, params, owner=WORD_IMPORTANCE.resolve(name)))


__all__ = ["KEEP", "WORD_IMPORTANCE", "WordImportance", "WordScores", "Words", "build_word_importance",
           "candidate_words"]
