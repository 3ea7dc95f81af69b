"""Encode the texts of an evaluation once for all encoder-based metrics.

The default content metrics read the same transformer twice: embedding cosine through the packaged
all-MiniLM-L6-v2 sentence encoder (mean pooling of the last layer over a window of 256 word pieces) and
BERTScore-style F1 through that encoder's transformer (:class:`~cfaug.judges.token_embeddings.TokenEncoder`,
last layer, windows of 256 by default). :class:`SharedEncoding` runs the token encoder first and derives the
sentence embedding of every text whose first token-encoder window holds the very same word pieces the
sentence encoder would read (it truncates to its own window) from that forward pass: the mean of the last
layer over all positions of that window, L2-normalised, which is what the sentence encoder computes. With
equal windows that is every text; only the others (e.g. a token window of 512 and a text longer than 256)
go through the sentence encoder. The values equal those of two separate passes up to float rounding (about
1e-7 in float32; in bfloat16 the shared value is the more exact one, pooled in float32), so the metrics'
settings and signatures do not change.

Sharing is switched on only after a check: two probe sentences are encoded both ways and must agree
(another model, another pooling or another layer fails it, and then each encoder encodes every text
itself). Per text, the token ids the sentence encoder would use (its own preprocessing: stripping,
lower-casing, truncation) must equal the token encoder's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

#: probe sentences of different lengths (so that the check covers padding in a batch), short enough for
#: any sentence encoder's window
PROBE = ("probe .", "a second , longer probe .")
#: largest difference between the two ways of computing a probe's sentence embedding that counts as equal,
#: by the encoders' precision (a bfloat16 sentence encoder pools and normalises in bfloat16: about 1e-3)
TOLERANCE = {"float32": 1e-4, "bfloat16": 5e-3}


class SharedEncoding:
    """Memoises token vectors (``tokens``) and sentence embeddings (``sentence``) of texts, encoding each
    text once where the two encoders share a transformer (see the module docstring). Either may be None.
    ``mover``: a third token encoder (another model) for the MoverScore distance, encoded alongside.
    ``seconds`` and :meth:`stats` say where the time went and how many texts each encoder read."""

    def __init__(self, sentence: Any = None, tokens: Any = None, mover: Any = None) -> None:
        self.sentence, self.tokens = sentence, tokens
        self.mover = mover if mover is not None and mover is not tokens else None
        self.seconds = {"token vectors": 0.0, "sentence embeddings": 0.0}
        if self.mover is not None:
            self.seconds["mover token vectors"] = 0.0
        self.texts = 0
        self.sentence_encoded = 0
        self.shared = 0
        self.share: bool | None = None if (sentence is not None and tokens is not None) else False
        self.why_not: str | None = None if self.share is None else "one encoder only"

    def encode(self, texts: Sequence[str]) -> None:
        """Encode ``texts`` (best: of similar lengths) into the encoders' memos."""
        texts = list(dict.fromkeys(texts))
        self.texts += len(texts)
        if self.share is None:
            self._probe()
        if self.tokens is not None:
            self.tokens.keep_pooled = bool(self.share)
            t = time.perf_counter()
            try:
                self.tokens.encode(texts)
            finally:
                self.tokens.keep_pooled = False
            self.seconds["token vectors"] += time.perf_counter() - t
        if self.mover is not None:
            t = time.perf_counter()
            self.mover.encode(texts)
            self.seconds["mover token vectors"] += time.perf_counter() - t
        if self.sentence is None:
            return
        t = time.perf_counter()
        todo = [x for x in texts if not self.sentence.known(x)]
        if self.share and todo:
            pooled = {x: self.tokens.take_pooled(x) for x in todo}
            fits = [x for x in todo if pooled[x] is not None]
            ids = self._sentence_ids(fits)
            same = [x for x in fits if ids.get(x) == pooled[x][0]]
            if same:
                self.sentence.remember(same, np.stack([pooled[x][1] for x in same]))
                self.shared += len(same)
            todo = [x for x in todo if not self.sentence.known(x)]
        if self.tokens is not None:
            self.tokens.clear_pooled()
        if todo:
            self.sentence.encode(todo)
            self.sentence_encoded += len(todo)
        self.seconds["sentence embeddings"] += time.perf_counter() - t

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {"distinct_texts": self.texts}
        if self.tokens is not None:
            out["token_encoder_texts"] = self.texts
        if self.sentence is not None:
            out["sentence_encoder_texts"] = self.sentence_encoded
            out["sentence_embeddings_from_token_pass"] = self.shared
            if self.tokens is not None and not self.share:
                out["not_shared_because"] = self.why_not
        return out

    def _probe(self) -> None:
        """Switch sharing on when both ways of computing the probes' sentence embeddings agree."""
        self.share = False
        fresh = [x for x in PROBE if not self.sentence.known(x)]
        self.tokens.keep_pooled = True
        try:
            self.tokens.encode(list(PROBE))
            pooled = [self.tokens.take_pooled(x) for x in PROBE]
        finally:
            self.tokens.keep_pooled = False
            self.tokens.clear_pooled()
        if any(p is None for p in pooled) or len(fresh) < len(PROBE):
            self.why_not = "the probe sentences could not be compared"
            return
        ids = self._sentence_ids(list(PROBE))
        if any(ids.get(x) != p[0] for x, p in zip(PROBE, pooled)):
            self.why_not = "the two encoders split the probe sentences into different word pieces"
            return
        reference = self.sentence.encode(list(PROBE))
        mine = np.stack([p[1] for p in pooled]).astype(np.float32)
        mine /= np.maximum(np.linalg.norm(mine, axis=1, keepdims=True), 1e-12)
        tolerance = max(TOLERANCE.get(getattr(e, "precision", "float32"), 1e-4) for e in (self.sentence, self.tokens))
        if reference.shape != mine.shape or float(np.abs(reference - mine).max()) > tolerance:
            self.why_not = "the sentence encoder is not mean pooling over the token encoder's last layer"
            return
        self.share, self.why_not = True, None

    def _sentence_ids(self, texts: list[str]) -> dict[str, list[int]]:
        """The word-piece ids the sentence encoder feeds its transformer for each of ``texts`` (its own
        preprocessing, window included); empty when it cannot say."""
        if not texts:
            return {}
        model = self.sentence.model
        prep = getattr(model, "preprocess", None) or getattr(model, "tokenize", None)
        try:
            feats = prep(texts)
            rows, masks = feats["input_ids"].tolist(), feats["attention_mask"].tolist()
        except Exception:  # noqa: BLE001 - an unexpected sentence-transformers API: encode separately
            return {}
        if len(rows) != len(texts):
            return {}
        return {t: [i for i, m in zip(row, mask) if m] for t, row, mask in zip(texts, rows, masks)}
