"""Contextual token vectors from a local transformer encoder, shared by MoverScore
(:mod:`cfaug.judges.mover`) and the BERTScore-style evaluation metric."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from cfaug.device import resolve_device
from cfaug.local_models import default_encoder_path, quiet_transformers, resolve_local_model, weights_hash


class TokenEncoder:
    """Token vectors of a Hugging Face encoder loaded from a local folder.

    Settings: ``layer`` (hidden-state index; -1 is the last layer) and ``max_length`` (the encoder's
    window in word pieces, special tokens included; capped by the model's position embeddings). A text
    longer than the window is cut into consecutive, non-overlapping windows, each encoded on its own with
    its special tokens, and the windows' vectors are concatenated, so every word piece of a long review
    gets a vector (nothing is truncated; a word piece sees context only inside its window). Special tokens
    ([CLS], [SEP], <s>...) are dropped and each remaining vector is L2-normalised. The default model is
    the transformer inside the packaged all-MiniLM-L6-v2 sentence encoder.

    Vectors are memoised per text; the memo keeps at most ``MEMO_ROWS`` token vectors (older texts are
    forgotten first).

    With ``keep_pooled`` set, :meth:`encode` also keeps, for every newly encoded text, the word-piece ids
    of its *first* window and the mean of that window's vectors *before* special tokens are dropped and rows
    normalised (what a mean-pooling sentence encoder built on the same transformer computes for a text it
    truncates to that window), until :meth:`take_pooled` hands them out. Evaluation uses this to get
    sentence embeddings from the same forward pass instead of encoding each text a second time.

    ``precision``: ``float32`` (default), ``bfloat16``, or ``auto`` (bfloat16 where the hardware computes
    it natively, see :func:`cfaug.device.resolve_precision`). bfloat16 reads about 1.8 times as
    many word pieces per second on a CPU with AVX512-BF16 and moves token vectors by a cosine of about
    1e-4; the precision used is part of :meth:`describe`.
    """

    MEMO_ROWS = 400_000  #: token vectors kept in memory (about 600 MB at 384 dimensions)

    def __init__(self, path: str | os.PathLike[str] | None = None, layer: int = -1, max_length: int = 512,
                 device: str | None = None, batch_size: int = 16, precision: str | None = "float32") -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        from cfaug.device import resolve_precision

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = resolve_local_model(path, "token encoder") if path else default_encoder_path()
        self.layer, self.batch_size = layer, batch_size
        self.device = resolve_device(device)
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.precision = resolve_precision(precision, self.device)
        self.model = AutoModel.from_pretrained(str(self.path), local_files_only=True).to(self.device).eval()
        if self.precision != "float32":
            self.model = self.model.to(getattr(torch, self.precision))
        limit = getattr(self.model.config, "max_position_embeddings", max_length) or max_length
        self.max_length = min(max_length, int(limit))
        specials = self.tokenizer.num_special_tokens_to_add(pair=False)
        if self.max_length <= specials:
            raise ValueError(f"max_length {self.max_length} leaves no room for text next to {specials} special tokens")
        self._torch = torch
        self._memo: dict[str, np.ndarray] = {}
        self._rows = 0
        self.keep_pooled = False
        self._pooled: dict[str, tuple[list[int], np.ndarray]] = {}

    def describe(self) -> dict[str, Any]:
        return {"model": str(self.path), "weights_sha256": weights_hash(self.path), "layer": self.layer,
                "max_length": self.max_length, "long_texts": "consecutive windows of max_length word pieces",
                "special_tokens": "dropped", "normalised": True, "precision": self.precision}

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One (tokens x dim) array per text, rows L2-normalised."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            self._encode(missing)
        out = [self._memo[t] for t in texts]
        if self._rows > self.MEMO_ROWS:
            self._forget(set(texts))
        return out

    def take_pooled(self, text: str) -> tuple[list[int], np.ndarray] | None:
        """(word-piece ids of the first window, mean of that window's unnormalised vectors over all its
        positions, special tokens included) of ``text`` kept by :meth:`encode` while ``keep_pooled`` was
        set, removed from the store; None when there is none (the text was memoised earlier, or pooling was
        off)."""
        return self._pooled.pop(text, None)

    def clear_pooled(self) -> None:
        self._pooled.clear()

    def _windows(self, texts: list[str]) -> list[tuple[int, list[int], list[int]]]:
        """(text index, word-piece ids, special-token mask) of every window of ``texts``, in text order."""
        enc = self.tokenizer(texts, truncation=True, max_length=self.max_length, return_overflowing_tokens=True,
                             stride=0, return_special_tokens_mask=True, verbose=False)
        if "overflow_to_sample_mapping" in enc:
            owner = list(enc["overflow_to_sample_mapping"])
        elif len(enc["input_ids"]) == len(texts):  # a slow tokenizer: it truncates instead of windowing
            owner = list(range(len(texts)))
        else:  # pragma: no cover - no known tokenizer does this
            raise RuntimeError("the tokenizer returned windows without saying which text each belongs to")
        return [(i, list(ids), list(mask)) for i, ids, mask in
                zip(owner, enc["input_ids"], enc["special_tokens_mask"])]

    def _encode(self, texts: list[str]) -> None:
        torch = self._torch
        windows = self._windows(texts)
        parts: list[list[tuple[int, np.ndarray]]] = [[] for _ in texts]
        first = {}
        for k, (owner, _, _) in enumerate(windows):
            first.setdefault(owner, k)
        order = sorted(range(len(windows)), key=lambda k: len(windows[k][1]))  # similar lengths: less padding
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for start in range(0, len(order), self.batch_size):
            chunk = [windows[k] for k in order[start: start + self.batch_size]]
            width = max(len(ids) for _, ids, _ in chunk)
            ids = np.full((len(chunk), width), pad, dtype=np.int64)
            attention = np.zeros((len(chunk), width), dtype=np.int64)
            keep = np.zeros((len(chunk), width), dtype=bool)
            for j, (_, piece, special) in enumerate(chunk):
                ids[j, :len(piece)] = piece
                attention[j, :len(piece)] = 1
                keep[j, :len(piece)] = np.asarray(special) == 0
            with torch.inference_mode():
                out = self.model(input_ids=torch.from_numpy(ids).to(self.device),
                                 attention_mask=torch.from_numpy(attention).to(self.device), output_hidden_states=True)
            hidden = out.hidden_states[self.layer].float().cpu().numpy()
            for j, k in enumerate(order[start: start + self.batch_size]):
                parts[windows[k][0]].append((k, hidden[j][keep[j]]))
                if self.keep_pooled and first[windows[k][0]] == k:
                    piece = windows[k][1]
                    self._pooled[texts[windows[k][0]]] = (list(piece), hidden[j][:len(piece)].mean(axis=0))
        for i, text in enumerate(texts):  # every text has at least one window (an empty text: only specials)
            vecs = np.concatenate([v for _, v in sorted(parts[i], key=lambda p: p[0])])
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            self._memo[text] = (vecs / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
            self._rows += len(vecs)

    def _forget(self, keep: set[str]) -> None:
        """Drop the oldest memoised texts (except ``keep``) until the memo is within ``MEMO_ROWS``."""
        for text in list(self._memo):
            if self._rows <= self.MEMO_ROWS:
                break
            if text not in keep:
                self._rows -= len(self._memo.pop(text))
