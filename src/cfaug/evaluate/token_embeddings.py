"""Contextual token embeddings from a local transformer encoder, shared by BERTScore-style matching and
the MoverScore-like distance."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from cfaug.judges.models import default_encoder_path, resolve_local_model, torch_device, weights_hash  # noqa: F401  (weights_hash re-exported)


class TokenEncoder:
    """Token vectors of a Hugging Face encoder loaded from a local folder.

    Settings: ``layer`` (hidden-state index; -1 is the last layer), ``max_length`` (longer texts are
    truncated to this many word pieces, special tokens included). Special tokens ([CLS], [SEP], <s>...)
    are dropped and each remaining vector is L2-normalised. The default model is the transformer inside
    the packaged all-MiniLM-L6-v2 sentence encoder.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, layer: int = -1, max_length: int = 512,
                 device: str | None = None, batch_size: int = 16) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = resolve_local_model(path, "token encoder") if path else default_encoder_path()
        self.layer, self.batch_size = layer, batch_size
        self.device = torch_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True).to(self.device).eval()
        limit = getattr(self.model.config, "max_position_embeddings", max_length) or max_length
        self.max_length = min(max_length, int(limit))
        self._torch = torch
        self._memo: dict[str, np.ndarray] = {}

    def describe(self) -> dict[str, Any]:
        return {"model": str(self.path), "weights_sha256": weights_hash(self.path), "layer": self.layer,
                "max_length": self.max_length, "special_tokens": "dropped", "normalised": True}

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One (tokens x dim) array per text, rows L2-normalised."""
        missing = sorted(dict.fromkeys(t for t in texts if t not in self._memo), key=len)  # less padding
        torch = self._torch
        for i in range(0, len(missing), self.batch_size):
            chunk = missing[i: i + self.batch_size]
            enc = self.tokenizer(chunk, truncation=True, max_length=self.max_length, padding=True,
                                 return_tensors="pt", return_special_tokens_mask=True)
            special = enc.pop("special_tokens_mask")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                out = self.model(**enc, output_hidden_states=True)
            hidden = out.hidden_states[self.layer].float().cpu().numpy()
            keep = (enc["attention_mask"].cpu().numpy() == 1) & (special.numpy() == 0)
            for j, text in enumerate(chunk):
                vecs = hidden[j][keep[j]]
                norms = np.linalg.norm(vecs, axis=1, keepdims=True)
                self._memo[text] = vecs / np.maximum(norms, 1e-12)
        return [self._memo[t] for t in texts]
