"""A Hugging Face transformer fine-tuned for classification from a local folder (nothing is downloaded).

AdamW with linear decay, ``epochs`` passes, the epoch with the best dev accuracy kept; inputs truncated
to ``max_length`` word pieces; NLI pairs are encoded as sentence pairs. A checkpoint whose head has a
different number of labels gets a fresh head. :meth:`TransformerClassifier.save` writes the fine-tuned
model and tokenizer with ``save_pretrained``; a loaded classifier reads them from its own folder.

As a :class:`~cfaug.classifiers.base.TorchTextClassifier` it reads single texts: ``ids_and_words`` gives
the word-piece ids and, for each, the word of :func:`cfaug.nlp.tokens.tokenize` it falls in ("" for
special tokens), ``embedding`` is the model's input (word-piece) embedding layer, and ``baseline_ids`` the
Integrated Gradients baseline (special tokens kept, padding elsewhere). A Hugging Face classifier given by
path (:class:`cfaug.judges.classifier.HFClassifierJudge`) shares these helpers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.classifiers.base import CLASSIFIERS, TorchTextClassifier, accuracy, need_file, split_dev
from cfaug.data.inputs import JudgeInput
from cfaug.classifiers.word_pieces import baseline_ids, logits_module, pad_id_of, piece_words
from cfaug.device import resolve_device
from cfaug.local_models import quiet_transformers, resolve_local_model, weights_hash


@dataclass
class TransformerConfig:
    """``model``: local folder of the pretrained transformer (required)."""

    model: str = ""
    epochs: int = 3
    batch_size: int = 16
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    max_length: int = 256
    device: str | None = None


@CLASSIFIERS.register("transformer.v1", "a local Hugging Face transformer fine-tuned; best dev epoch kept")
class TransformerClassifier(TorchTextClassifier):
    name = "transformer.v1"
    Config = TransformerConfig

    def __init__(self, config: TransformerConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        if not self.config.model:
            raise ValueError("the transformer classifier needs model=<local folder> (-p model=PATH)")
        self.path = resolve_local_model(self.config.model, "transformer")
        self.model: Any = None
        self.tokenizer: Any = None
        self._net: Any = None

    # -- TorchTextClassifier -------------------------------------------------------------------------------
    @property  # type: ignore[override]
    def net(self) -> Any:
        """The model as ``forward(ids) -> logits`` (attention mask from ``ids != pad_id``)."""
        if self.model is None:
            return None
        if self._net is None or self._net.model is not self.model:
            self._net = logits_module(self.model, self.pad_id)
        return self._net

    @property
    def pad_id(self) -> int:  # type: ignore[override]
        return pad_id_of(self.tokenizer)

    @property
    def embedding(self) -> Any:
        if self.model is None:
            raise RuntimeError(f"{self.name}: the model exists only after fit or load")
        return self.model.get_input_embeddings()

    def ids_and_words(self, text: str) -> tuple[list[int], list[str]]:
        if self.tokenizer is None:
            raise RuntimeError(f"{self.name}: the tokenizer exists only after fit or load")
        return piece_words(self.tokenizer, text, self.config.max_length)

    def baseline_ids(self, ids: Any) -> Any:
        """The Integrated Gradients baseline of ``ids``: special tokens kept, padding elsewhere."""
        return baseline_ids(self.tokenizer, ids)

    # -- training and prediction ------------------------------------------------------------------------------
    def _tensors(self, inputs: Sequence[JudgeInput]) -> Any:
        if inputs and not isinstance(inputs[0], str):
            return self.tokenizer([x[0] for x in inputs], [x[1] for x in inputs], truncation=True,
                                  max_length=self.config.max_length, padding=True, return_tensors="pt")
        return self.tokenizer(list(inputs), truncation=True, max_length=self.config.max_length, padding=True,
                              return_tensors="pt")

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str],
            dev_inputs: Sequence[JudgeInput] | None = None, dev_labels: Sequence[str] | None = None) -> dict[str, Any]:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        inputs, labels, dev_inputs, dev_labels, facts = split_dev(inputs, labels, dev_inputs, dev_labels, self.seed)
        c = self.config
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        self.labels = tuple(sorted(set(labels)))
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(self.path), local_files_only=True, num_labels=len(self.labels), ignore_mismatched_sizes=True,
            id2label=dict(enumerate(self.labels)), label2id={lab: i for i, lab in enumerate(self.labels)})
        device = resolve_device(c.device)
        self.model.to(device)
        y = np.array([self.labels.index(lab) for lab in labels])
        steps = c.epochs * ((len(inputs) + c.batch_size - 1) // c.batch_size)
        no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
        groups = [
            {"params": [p for n, p in self.model.named_parameters() if not any(k in n for k in no_decay)],
             "weight_decay": c.weight_decay},
            {"params": [p for n, p in self.model.named_parameters() if any(k in n for k in no_decay)],
             "weight_decay": 0.0},
        ]
        opt = torch.optim.AdamW(groups, lr=c.learning_rate)
        sched = get_linear_schedule_with_warmup(opt, 0, max(1, steps))
        best: tuple[float, int, dict[str, Any]] = (-1.0, 0, {})
        for epoch in range(1, c.epochs + 1):
            self.model.train()
            order = rng.permutation(len(inputs))
            for i in range(0, len(order), c.batch_size):
                idx = order[i: i + c.batch_size]
                enc = {k: v.to(device) for k, v in self._tensors([inputs[j] for j in idx]).items()}
                out = self.model(**enc, labels=torch.tensor(y[idx], device=device))
                out.loss.backward()
                opt.step()
                sched.step()
                opt.zero_grad()
            acc = accuracy(self.predict(dev_inputs), dev_labels)
            if acc > best[0]:
                best = (acc, epoch, {k: v.detach().clone() for k, v in self.model.state_dict().items()})
        self.model.load_state_dict(best[2])
        self.model.eval()
        return {"epoch": best[1], "dev_accuracy": best[0], **facts}

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        import torch

        if self.model is None:
            raise RuntimeError(f"{self.name}: predict_proba called before fit")
        self.model.eval()
        device = next(self.model.parameters()).device
        out: list[np.ndarray] = []
        step = self.config.batch_size * 2
        with torch.inference_mode():
            for i in range(0, len(inputs), step):
                enc = {k: v.to(device) for k, v in self._tensors(inputs[i: i + step]).items()}
                out.append(torch.softmax(self.model(**enc).logits.double(), dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.labels)))

    # -- save / load -----------------------------------------------------------------------------------------
    def _save_weights(self, folder: Path) -> dict[str, Any]:
        if self.model is None:
            raise RuntimeError(f"{self.name}: save called before fit")
        self.model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        return {"base_model": str(self.path)}

    @classmethod
    def _config_from_manifest(cls, folder: Path, manifest: dict[str, Any]) -> Any:
        """The saved config, reading the model from the saved folder (the base model may be gone)."""
        need_file(folder, "config.json")
        return super()._config_from_manifest(folder, {**manifest, "config": {**manifest.get("config", {}),
                                                                             "model": str(folder)}})

    def _load_weights(self, folder: Path, manifest: dict[str, Any]) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
            need_file(folder, "model.safetensors")
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
        self.model.to(resolve_device(self.config.device)).eval()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "weights_sha256": weights_hash(self.path)}
