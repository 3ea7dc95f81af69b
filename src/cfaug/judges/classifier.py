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

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError
from cfaug.classifiers.word_pieces import baseline_ids, logits_module, pad_id_of, piece_words
from cfaug.judges.base import JudgeInput, LabelJudge, predict_labels  # noqa: F401  (re-exported)
from cfaug.device import resolve_device
from cfaug.local_models import quiet_transformers, resolve_local_model

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
    is loaded): ``path`` is a local folder (else :class:`~cfaug.local_models.ModelPathError`) holding a
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
    object has ``path``. Raises :class:`~cfaug.local_models.ModelPathError` for anything that is not a
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
    :func:`cfaug.nlp.tokens.tokenize` it falls in), ``logits``, ``pad_id`` and ``baseline_ids``.
    """

    def __init__(self, path: str | os.PathLike[str], labels: Sequence[str] | None = None,
                 device: str | None = None, batch_size: int = 32, max_length: int = 512, *,
                 label_space: Any = None, what: str = "classifier", flag: str = "labels=",
                 flag_note: str = "") -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = resolve_local_model(path, what)
        self.device = resolve_device(device)
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


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "unknown"
