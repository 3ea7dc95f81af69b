"""A word vocabulary for small generators trained here: lower-cased word and punctuation tokens
(:func:`cfaug.nlp.tokens.tokenize`), special ids for padding, unknown words, start and end, and a
detokenizer that writes the tokens back as readable text."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from cfaug.nlp.tokens import tokenize

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")

_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}]|n't|'s|'re|'ve|'ll|'d|'m)(?=\s|$)")
_NO_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_SPLIT_CLITIC = re.compile(r" ' (s|m|re|ve|ll|d)(?=\s|$)")


class WordVocab:
    """Words seen at least ``min_count`` times in the texts it was built from, most frequent first (at
    most ``max_size`` including the four special tokens)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 2, max_size: int = 20000) -> WordVocab:
        counts = Counter(w for t in texts for w in tokenize(t))
        ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        return cls(ranked[: max(0, max_size - len(SPECIALS))])

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        """Token ids of ``text`` followed by EOS (cut to ``max_tokens`` words first)."""
        words = tokenize(text)
        if max_tokens is not None:
            words = words[:max_tokens]
        return [self.index.get(w, UNK) for w in words] + [EOS]

    def decode(self, ids: Iterable[int]) -> str:
        """Readable text of ``ids`` up to the first EOS (padding and BOS skipped)."""
        words = []
        for i in ids:
            if i == EOS:
                break
            if i in (PAD, BOS):
                continue
            words.append(self.words[i] if 0 <= i < len(self.words) else SPECIALS[UNK])
        return detokenize(words)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.words[len(SPECIALS):], ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> WordVocab:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))


def detokenize(words: Sequence[str]) -> str:
    """Join tokens with spaces, then remove the spaces English does not put before closing punctuation
    and clitics ("good ." -> "good.", "do n't" -> "don't", "it ' s" -> "it's") or after opening brackets."""
    text = _SPLIT_CLITIC.sub(r"'\1", " ".join(words))  # "it ' s" (a tokenized "it 's") -> "it's"
    text = _NO_SPACE_BEFORE.sub(r"\1", text)
    text = _NO_SPACE_BEFORE.sub(r"\1", text)  # "it 's ." needs two passes
    return _NO_SPACE_AFTER.sub(r"\1", text)
