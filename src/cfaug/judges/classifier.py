"""Label judges: classifiers that say how strongly a text carries each label.

Every judge has ``name``, ``labels`` (column order of :meth:`predict_proba`) and ``describe()`` (settings
and hashes for provenance). Inputs are strings, or (premise, hypothesis) pairs for NLI.

:func:`load_classifier_by_path` is the one loader of a classifier given by path, wherever one is taken
(CoBA's voting models, auto-CAD's classifier, the ``hf-classifier`` judge of every method and of
``cfaug evaluate``, the t2s discriminators): a folder written by cfaug (``classifier.json``) or a local
Hugging Face sequence classifier; a name that is not a local folder (a hub name) is refused, since models
load by local path only. Output names are mapped onto the task's labels by :func:`map_model_labels`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import pickle
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError
from cfaug.judges.base import JudgeInput, LabelJudge, predict_labels  # noqa: F401  (re-exported)
from cfaug.judges.models import quiet_transformers, resolve_local_model, torch_device

PAIR_SEP = " [SEP] "


def as_text(x: JudgeInput) -> str:
    return x if isinstance(x, str) else PAIR_SEP.join(x)


class TfidfLinearJudge:
    """TF-IDF (word 1-2 grams, sublinear tf) + a linear model trained on the fly.

    ``model="logreg"`` gives calibrated probabilities (used by auto-CAD); ``model="svm"`` is the linear
    SVM of the papers' statistical baseline (probabilities are a softmax of its margins). Training is
    deterministic for a given ``seed``.
    """

    def __init__(self, model: str = "logreg", C: float = 1.0, ngram_max: int = 2, min_df: int = 1,
                 seed: int = 0) -> None:
        if model not in ("logreg", "svm"):
            raise ValueError(f"model must be 'logreg' or 'svm', got {model!r}")
        self.model_kind, self.C, self.ngram_max, self.min_df, self.seed = model, C, ngram_max, min_df, seed
        self.labels: tuple[str, ...] = ()
        self._vec: Any = None
        self._clf: Any = None
        self._train_hash = ""
        self.provenance: dict[str, Any] = {}  #: where the training data came from (file, hash, rows)

    @property
    def name(self) -> str:
        return f"tfidf-{self.model_kind}"

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str]) -> TfidfLinearJudge:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        texts = [as_text(x) for x in inputs]
        if len(set(labels)) < 2:
            raise ValueError("a classifier needs at least two distinct labels in its training data")
        self._vec = TfidfVectorizer(ngram_range=(1, self.ngram_max), sublinear_tf=True, min_df=self.min_df,
                                    lowercase=True, token_pattern=r"(?u)\b\w[\w']*\b")
        X = self._vec.fit_transform(texts)
        if self.model_kind == "logreg":
            # liblinear is binary only; more classes (ratings, NLI) get a multinomial model
            solver = "liblinear" if len(set(labels)) == 2 else "lbfgs"
            self._clf = LogisticRegression(C=self.C, max_iter=2000, solver=solver, random_state=self.seed)
        else:
            self._clf = LinearSVC(C=self.C, random_state=self.seed)
        self._clf.fit(X, list(labels))
        self.labels = tuple(str(c) for c in self._clf.classes_)
        h = hashlib.sha256()
        for t, y in zip(texts, labels):
            h.update(t.encode("utf-8", "replace"))
            h.update(b"\0" + str(y).encode() + b"\n")
        self._train_hash = h.hexdigest()[:16]
        return self

    def decision(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        X = self._vec.transform([as_text(x) for x in inputs])
        d = self._clf.decision_function(X)
        if d.ndim == 1:
            d = np.stack([-d, d], axis=1) / 2.0
        return d

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        if self._clf is None:
            raise RuntimeError("TfidfLinearJudge.predict_proba called before fit")
        if len(inputs) == 0:
            return np.zeros((0, len(self.labels)))
        if self.model_kind == "logreg":
            return self._clf.predict_proba(self._vec.transform([as_text(x) for x in inputs]))
        d = self.decision(inputs)
        e = np.exp(d - d.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "C": self.C, "ngram_max": self.ngram_max, "min_df": self.min_df,
                "seed": self.seed, "train_sha256": self._train_hash, "labels": list(self.labels), **self.provenance}

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "wb") as fh:
            pickle.dump(self, fh)

    @staticmethod
    def load(path: str | os.PathLike[str]) -> TfidfLinearJudge:
        with open(path, "rb") as fh:
            obj = pickle.load(fh)
        if not isinstance(obj, TfidfLinearJudge):
            raise TypeError(f"{path} does not hold a TfidfLinearJudge")
        return obj


#: output names transformers makes up for outputs nobody named (``LABEL_0``, ``LABEL_1`` ...)
GENERIC_LABEL = re.compile(r"label_?\d+", re.IGNORECASE)


def is_generic_label(name: object) -> bool:
    """Whether ``name`` is a made-up output name such as ``LABEL_0`` (it says nothing about the class)."""
    return bool(GENERIC_LABEL.fullmatch(str(name).strip()))


def folder_label_names(folder: str | os.PathLike[str]) -> list[str]:
    """The output names a classifier folder declares, in output order, reading only its small JSON files:
    ``labels`` of a cfaug ``classifier.json``, else ``id2label`` of a Hugging Face ``config.json``
    (``LABEL_<i>`` for outputs it leaves unnamed, as transformers does)."""
    folder = Path(folder)
    manifest = folder / "classifier.json"
    try:
        if manifest.is_file():
            return [str(x) for x in json.loads(manifest.read_text(encoding="utf-8"))["labels"]]
        config = folder / "config.json"
        if not config.is_file():
            raise ConfigError(f"{folder} holds neither a classifier saved by cfaug (classifier.json) nor a "
                              "Hugging Face model (config.json)")
        cfg = json.loads(config.read_text(encoding="utf-8"))
    except (ValueError, KeyError, TypeError, OSError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{folder}: unreadable classifier config ({exc})") from None
    id2label = {str(k): str(v) for k, v in (cfg.get("id2label") or {}).items()}
    n = len(id2label) or int(cfg.get("num_labels") or 2)
    return [id2label.get(str(i), f"LABEL_{i}") for i in range(n)]


def map_model_labels(names: Sequence[str], *, given: Sequence[str] | None = None, label_space: Any = None,
                     source: str = "classifier", flag: str = "labels=", flag_note: str = "",
                     lower: bool = True) -> tuple[str, ...]:
    """The task labels of a classifier's outputs, in output order.

    ``names`` are the classifier's own output names; ``given`` (the user's list, in output order) replaces
    them. Made-up names (``LABEL_0`` ...) without ``given`` are refused with a :class:`ConfigError` that
    names ``flag`` (and ``flag_note``, where it is set). With a task ``label_space`` every name goes
    through its spellings (``POSITIVE``, ``neg``, ``Entailment`` -> the task's label) and must be a label
    of the task; without one names are lower-cased (``lower``) and kept.
    """
    names = [str(x).strip() for x in names]
    if given is not None:
        given = [str(x).strip() for x in given if str(x).strip()]
        if len(given) != len(names):
            raise ConfigError(f"{source} has {len(names)} outputs but {len(given)} labels were given "
                              f"({flag}{','.join(given)}{flag_note}); give one label per output, in output order")
        names = given
    elif any(is_generic_label(nm) for nm in names):
        shown = [nm.lower() for nm in names]
        example = ",".join(label_space.labels) if label_space is not None and len(label_space.labels) == len(names) \
            else "..."
        raise ConfigError(f"{source} has unnamed labels {shown}; pass {flag}{example}{flag_note} with the task "
                          "label of each output, in output order")
    if label_space is None:
        out = [nm.lower() if lower else nm for nm in names]
    else:
        import copy

        from cfaug.data.labels import LabelError

        space = copy.deepcopy(label_space)  # looking a spelling up must not change the output's spelling
        out = []
        for nm in names:
            try:
                out.append(space.canonical(nm))
            except LabelError:
                raise ConfigError(f"{source}: output {nm!r} is not a label of the task "
                                  f"({', '.join(label_space.labels)}); pass {flag}...{flag_note} naming the task "
                                  "label of each output, in output order") from None
    if len(set(out)) != len(out):
        raise ConfigError(f"{source}: two outputs have the same label ({', '.join(out)}); pass {flag}..."
                          f"{flag_note} with one label per output")
    return tuple(out)


def check_classifier_folder(path: str | os.PathLike[str], *, labels: Sequence[str] | str | None = None,
                            label_space: Any = None, what: str = "classifier", flag: str = "labels=",
                            flag_note: str = "") -> tuple[str, ...]:
    """What :func:`load_classifier_by_path` would check, from the folder's small JSON files alone (no model
    is loaded): ``path`` is a local folder (else :class:`~cfaug.judges.models.ModelPathError`) holding a
    classifier whose outputs map onto labels (else :class:`ConfigError`). Returns those labels. Methods
    call it before any work, so a bad folder stops a run at once, not in every engine worker."""
    folder = resolve_local_model(path, what)
    if isinstance(labels, str):
        labels = [x.strip() for x in labels.split(",") if x.strip()] or None
    return map_model_labels(folder_label_names(folder), given=labels, label_space=label_space,
                            source=f"{what} {folder}", flag=flag, flag_note=flag_note,
                            lower=not (folder / "classifier.json").is_file())


def load_classifier_by_path(path: str | os.PathLike[str], *, labels: Sequence[str] | None = None,
                            label_space: Any = None, device: str | None = None, batch_size: int = 32,
                            what: str = "classifier", flag: str = "labels=", flag_note: str = "") -> Any:
    """A classifier from a local folder: one saved by cfaug (``classifier.json``; see
    :func:`cfaug.classifiers.load_classifier`) or a Hugging Face sequence classifier
    (:class:`HFClassifierJudge`). Its ``labels`` come from :func:`map_model_labels` (``labels`` given by
    the user in output order, else the folder's own names; through ``label_space`` when given); the
    object has ``path``. Raises :class:`~cfaug.judges.models.ModelPathError` for anything that is not a
    local folder (a hub name) and :class:`ConfigError` for labels that cannot be mapped."""
    folder = resolve_local_model(path, what)
    if (folder / "classifier.json").is_file():
        from cfaug.classifiers.base import load_classifier

        clf = load_classifier(folder)
        clf.labels = map_model_labels(list(clf.labels), given=labels, label_space=label_space,
                                      source=f"{what} {folder}", flag=flag, flag_note=flag_note, lower=False)
        if not hasattr(clf, "path"):
            clf.path = folder
        return clf
    return HFClassifierJudge(folder, labels=labels, device=device, batch_size=batch_size,
                             label_space=label_space, what=what, flag=flag, flag_note=flag_note)


class HFClassifierJudge:
    """A Hugging Face sequence classifier loaded from a local folder.

    ``labels`` maps the model's output columns to task labels in order; when omitted, the model's
    ``id2label`` names are used (``LABEL_0``-style names require ``labels``); see :func:`map_model_labels`.

    Besides ``predict_proba`` it offers what gradient attribution needs, as
    :class:`~cfaug.classifiers.base.TorchTextClassifier` does: ``embedding`` (the input word-piece
    embeddings), ``ids_and_words`` (word-piece ids and, per piece, the word of
    :func:`cfaug.judges.similarity.tokenize` it falls in), ``logits``, ``pad_id`` and ``baseline_ids``.
    """

    def __init__(self, path: str | os.PathLike[str], labels: Sequence[str] | None = None,
                 device: str | None = None, batch_size: int = 32, max_length: int = 512, *,
                 label_space: Any = None, what: str = "classifier", flag: str = "labels=",
                 flag_note: str = "") -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = resolve_local_model(path, what)
        self.device = torch_device(device)
        self.batch_size = batch_size
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(self.path), local_files_only=True)
        self.model.to(self.device).eval()
        longest = getattr(self.model.config, "max_position_embeddings", None)
        self.max_length = min(max_length, int(longest)) if isinstance(longest, int) and longest > 2 else max_length
        n = self.model.config.num_labels
        own = [str(self.model.config.id2label.get(i, f"LABEL_{i}")) for i in range(n)]
        self.labels = map_model_labels(own, given=labels, label_space=label_space, source=f"{what} {self.path}",
                                       flag=flag, flag_note=flag_note)
        self._torch = torch
        self._net: Any = None

    @property
    def name(self) -> str:
        return f"hf:{self.path.name}"

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        out = []
        with self._torch.inference_mode():
            for i in range(0, len(inputs), self.batch_size):
                chunk = inputs[i: i + self.batch_size]
                if chunk and not isinstance(chunk[0], str):
                    enc = self.tokenizer([c[0] for c in chunk], [c[1] for c in chunk], truncation=True,
                                         max_length=self.max_length, padding=True, return_tensors="pt")
                else:
                    enc = self.tokenizer(list(chunk), truncation=True, max_length=self.max_length,
                                         padding=True, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items()}
                logits = self.model(**enc).logits.float()
                out.append(self._torch.softmax(logits, dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.labels)))

    # -- gradient attribution (the TorchTextClassifier interface) ---------------------------------------------
    @property
    def pad_id(self) -> int:
        return pad_id_of(self.tokenizer)

    @property
    def embedding(self) -> Any:
        return self.model.get_input_embeddings()

    @property
    def net(self) -> Any:
        """The model as ``forward(ids) -> logits`` (attention mask from ``ids != pad_id``)."""
        if self._net is None or self._net.model is not self.model:
            self._net = logits_module(self.model, self.pad_id)
        return self._net

    def ids_and_words(self, text: str) -> tuple[list[int], list[str]]:
        return piece_words(self.tokenizer, text, self.max_length)

    def logits(self, ids: Any) -> Any:
        """Logits of a batch of id rows, gradients flowing (no ``inference_mode``)."""
        self.model.eval()
        return self.net(ids.to(next(self.model.parameters()).device))

    def baseline_ids(self, ids: Any) -> Any:
        return baseline_ids(self.tokenizer, ids)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "path": str(self.path), "labels": list(self.labels),
                "config_sha256": _file_hash(self.path / "config.json")}


# -- word pieces and words, shared by every transformer classifier -----------------------------------------
def pad_id_of(tokenizer: Any) -> int:
    pad = getattr(tokenizer, "pad_token_id", None)
    return int(pad) if pad is not None else 0


def _structural_ids(tokenizer: Any) -> set[int]:
    """The ids of the special tokens that stand for no text ([CLS], [SEP], padding...); the unknown token
    stands for a word of the text and is not one of them."""
    unk = getattr(tokenizer, "unk_token_id", None)
    return {int(i) for i in tokenizer.all_special_ids if i is not None and i != unk}


def piece_words(tokenizer: Any, text: str, max_length: int) -> tuple[list[int], list[str]]:
    """The word-piece ids of ``text`` (truncated to ``max_length``) and, piece by piece, the word of
    :func:`cfaug.judges.similarity.tokenize` its characters fall in ("" for special tokens and pieces
    outside every word), so that attributions summed per word cover all of a word's pieces. A tokenizer
    without character offsets (a slow one) gives its own tokens, lower-cased, instead."""
    from cfaug.judges.similarity import _TOKEN

    fast = bool(getattr(tokenizer, "is_fast", False))
    enc = tokenizer(text, truncation=True, max_length=max_length, return_offsets_mapping=fast)
    ids = [int(i) for i in enc["input_ids"]]
    special = _structural_ids(tokenizer)
    offsets = enc.get("offset_mapping") if fast else None
    if offsets is None:
        toks = tokenizer.convert_ids_to_tokens(ids)
        return ids, ["" if i in special else t.lower().lstrip("#").lstrip("\u0120\u2581") for i, t in zip(ids, toks)]
    lower = text.lower()
    if len(lower) != len(text):  # lower-casing changed the length: offsets index the text itself
        return ids, ["" if i in special or e <= s else text[s:e].lower() for i, (s, e) in zip(ids, offsets)]
    spans = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(lower)]
    ends = [e for _, e, _ in spans]
    words = []
    for i, (s, e) in zip(ids, offsets):
        if i in special or e <= s:
            words.append("")
            continue
        j = bisect.bisect_right(ends, s)  # the first word ending after the piece starts
        words.append(spans[j][2] if j < len(spans) and spans[j][0] < e else "")
    return ids, words


def baseline_ids(tokenizer: Any, ids: Any) -> Any:
    """The Integrated Gradients baseline of a batch of id rows: special tokens ([CLS], [SEP] ...) kept,
    every other piece (the unknown token too) replaced by padding (whose embedding stands for "no word")."""
    import torch

    special = torch.tensor(sorted(_structural_ids(tokenizer)), dtype=ids.dtype, device=ids.device)
    return torch.where(torch.isin(ids, special), ids, torch.full_like(ids, pad_id_of(tokenizer)))


def logits_module(model: Any, pad_id: int) -> Any:
    """``model`` as a module ``forward(ids) -> logits``, the attention mask from ``ids != pad_id``."""
    from torch import nn

    class Logits(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any) -> Any:
            return self.model(input_ids=ids, attention_mask=(ids != pad_id).long()).logits

    return Logits()


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "unknown"
