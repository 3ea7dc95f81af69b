"""Word pieces and words, shared by every transformer classifier: which piece belongs to which word, the
padding id, the Integrated Gradients baseline and the logits as a module."""

from __future__ import annotations

import bisect
from typing import Any


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
    :func:`cfaug.nlp.tokens.tokenize` its characters fall in ("" for special tokens and pieces
    outside every word), so that attributions summed per word cover all of a word's pieces. A tokenizer
    without character offsets (a slow one) gives its own tokens, lower-cased, instead."""
    from cfaug.nlp.tokens import _TOKEN

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
