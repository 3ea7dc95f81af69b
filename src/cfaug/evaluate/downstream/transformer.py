"""A Hugging Face transformer fine-tuned for classification from a local folder (nothing is downloaded).

AdamW with linear decay, ``epochs`` passes, the epoch with the best dev accuracy kept; inputs truncated
to ``max_length`` word pieces; NLI pairs are encoded as sentence pairs. A checkpoint whose head has a
different number of labels gets a fresh head.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cfaug.evaluate.downstream.classifiers import CLASSIFIERS, TextClassifier, accuracy
from cfaug.judges.classifier import JudgeInput
from cfaug.judges.models import resolve_local_model, torch_device


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
class TransformerClassifier(TextClassifier):
    name = "transformer.v1"
    Config = TransformerConfig

    def __init__(self, config: TransformerConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        if not self.config.model:
            raise ValueError("the transformer classifier needs model=<local folder> (-p model=PATH)")
        self.path = resolve_local_model(self.config.model, "transformer")
        self.labels: tuple[str, ...] = ()
        self.model: Any = None
        self.tokenizer: Any = None

    def _tensors(self, inputs: Sequence[JudgeInput]) -> Any:
        if inputs and not isinstance(inputs[0], str):
            return self.tokenizer([x[0] for x in inputs], [x[1] for x in inputs], truncation=True,
                                  max_length=self.config.max_length, padding=True, return_tensors="pt")
        return self.tokenizer(list(inputs), truncation=True, max_length=self.config.max_length, padding=True,
                              return_tensors="pt")

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str], dev_inputs: Sequence[JudgeInput],
            dev_labels: Sequence[str]) -> dict[str, Any]:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        c = self.config
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        self.labels = tuple(sorted(set(labels)))
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(self.path), local_files_only=True, num_labels=len(self.labels), ignore_mismatched_sizes=True,
            id2label=dict(enumerate(self.labels)), label2id={lab: i for i, lab in enumerate(self.labels)})
        device = torch_device(c.device)
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
        return {"epoch": best[1], "dev_accuracy": best[0]}

    def predict(self, inputs: Sequence[JudgeInput]) -> list[str]:
        import torch

        if self.model is None:
            raise RuntimeError("predict called before fit")
        self.model.eval()
        device = next(self.model.parameters()).device
        preds: list[int] = []
        with torch.inference_mode():
            for i in range(0, len(inputs), self.config.batch_size * 2):
                enc = {k: v.to(device) for k, v in self._tensors(inputs[i: i + self.config.batch_size * 2]).items()}
                preds.extend(self.model(**enc).logits.argmax(dim=-1).cpu().tolist())
        return [self.labels[p] for p in preds]

    def describe(self) -> dict[str, Any]:
        from cfaug.evaluate.token_embeddings import weights_hash

        return {**super().describe(), "weights_sha256": weights_hash(self.path)}
