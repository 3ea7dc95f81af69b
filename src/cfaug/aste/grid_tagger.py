"""A Grid Tagging Scheme model for aspect sentiment triplet extraction (Wu et al., 2020, "GTS") that trains
in a minute or two on one CPU thread.

Tagging. Every token pair ``(i, j)`` with ``i <= j`` of a sentence gets one tag of :data:`TAGS`: ``A``
when both tokens belong to the same aspect term (so the diagonal cell ``(i, i)`` says "token ``i`` is part
of an aspect"), ``O`` likewise for an opinion term, ``POS`` / ``NEU`` / ``NEG`` when one token belongs to
an aspect and the other to an opinion of a triplet with that polarity (the cell ``(min, max)`` of the
two positions), ``N`` otherwise. The lower triangle is never used.

Model. Each token is read as a learnt embedding of its lower-cased word (the training set's words,
initialised by default from the packaged encoder's word-piece embeddings, ``init_embeddings``; unknown
words share one vector, and a ``word_dropout`` share of training tokens is read as unknown so that vector is
learnt), optionally joined by a character CNN (``char_dim``), by fixed vectors from the packaged
all-MiniLM-L6-v2 encoder (``contextual``: the token's hidden state at ``contextual_layer``, averaged over its
word pieces -- the default; ``frozen_vectors``: the word's mean word-piece input embedding), and goes
through a one-layer BiLSTM. The encoder is never trained: its vectors are computed once per sentence, so
training stays a small BiLSTM's. The representation of a cell is ``relu(L h_i + R h_j + D[|j - i|])`` (a
linear map of ``[h_i; h_j]`` plus a learnt vector of the bucketed token distance, which marks the
diagonal), scored by a linear layer (plus an optional biaffine term ``h_i^T W_tag h_j``). GTS's mutual
inference then runs ``hops`` times: each token's largest tag logits over its row and column are appended to
the features of every cell that involves it, and the cells are scored again. Training minimises the
cross-entropy of the upper triangle's tags (non-``N`` cells weighted ``tag_weight``) with
:func:`cfaug.training.loop.train_loop`: Adam with a linearly decaying learning rate, batches of sentences
of similar length, the epoch with the best dev triplet F1 kept, early stopping after ``patience`` epochs
without a better one. With ``contextual=None`` (and ``init_embeddings=None``, ``frozen_vectors=None``) the
model uses no pretrained weights at all.

Decoding (:func:`decode_grid`, as in GTS). Aspect terms are the runs of consecutive diagonal cells tagged
``A`` and opinion terms the runs tagged ``O`` (so two adjacent aspects read as one; splitting runs where
the neighbours' own cell is not ``A`` scored slightly lower on 14res dev). Every (aspect, opinion) pair whose cells -- ``(i, j)`` for ``i`` in the
aspect and ``j`` in the opinion -- hold at least one polarity tag becomes a triplet whose polarity is the
majority of those polarity tags (``N`` and other tags ignored; ties go to POS, then NEG, then NEU as in the
GTS code).

Confidence (:func:`triplet_confidence`). A predicted triplet is decided by its aspect's diagonal cells, its
opinion's diagonal cells and its pair cells; its confidence is the minimum of (a) the smallest ``A``
probability among the aspect's diagonal cells, (b) the smallest ``O`` probability among the opinion's
diagonal cells and (c) the mean probability of the chosen polarity over its pair cells. A high confidence
thus means every step that produced the triplet was confident, which suits a pseudo-labeller.

Determinism. Vocabulary, initial weights, the held-out dev split, dropout and the batch order depend only
on the tagger's ``seed``, and the encoder's vectors of a sentence do not depend on the other sentences
encoded in the process (:class:`ContextualVectors`); on CPU two fits with the same seed, data and config
give the same weights, whatever ran before them in the process.

Cost (one CPU thread, 14res: 1,266 training sentences): about 3 s per epoch plus 1 s of dev evaluation with
the defaults, and some 15 s to load the encoder and encode train and dev once (encoded sentences are cached
per process, at most 10,000).

>>> tagger = GridTagger(GridTaggerConfig(epochs=20), seed=1)            # doctest: +SKIP
>>> tagger.fit(train_examples, dev_examples)                            # doctest: +SKIP
>>> tagger.predict([["the", "food", "was", "great"]])                  # doctest: +SKIP
[[ScoredTriplet(triplet=Triplet(aspect=(1,), opinion=(3,), polarity='POS'), confidence=0.93)]]
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import tempfile
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.aste.metrics import triplet_scores
from cfaug.config import build_config, config_dict, param
from cfaug.data.aste import AsteExample, Triplet
from cfaug.training.context import FitContext

#: the tags of a cell, in the order of the model's outputs
TAGS = ("N", "A", "O", "POS", "NEU", "NEG")
N_TAG, A_TAG, O_TAG = 0, 1, 2
POLARITY_TAG = {"POS": 3, "NEU": 4, "NEG": 5}
TAG_POLARITY = {v: k for k, v in POLARITY_TAG.items()}
#: GTS's order among polarities with equal votes
_TIE_ORDER = (POLARITY_TAG["POS"], POLARITY_TAG["NEG"], POLARITY_TAG["NEU"])
PAD, UNK = 0, 1  #: word and character ids of padding and of unknown items
#: lower ends of the buckets of token distances |j - i| the cell features see (distance 0: the diagonal)
_DISTANCE_BUCKETS = (0, 1, 2, 3, 4, 5, 8, 16, 32)
MAX_WORD_CHARS = 20  #: characters of a word the character CNN reads
MANIFEST = "grid_tagger.json"
WEIGHTS = "model.pt"
#: values of ``init_embeddings`` and ``frozen_vectors``
PIECE_CHOICES = ("minilm",)


@dataclass
class GridTaggerConfig:
    """Settings of :class:`GridTagger` (defaults chosen on the 14res dev set, see the project's notes)."""

    embedding_dim: int = param(50, "size of the learnt word embeddings", min=1, fit=True)
    char_dim: int = param(0, "size of the character embeddings of the character CNN (0: no character CNN)",
                          min=0, fit=True)
    char_filters: int = param(50, "filters (output size) of the character CNN", min=1, fit=True)
    hidden_size: int = param(64, "hidden size of each direction of the BiLSTM", min=1, fit=True)
    pair_size: int = param(64, "size of the token-pair (cell) representation", min=1, fit=True)
    distance: bool = param(True, "give each cell a learnt vector of the distance between its two tokens "
                                 "(bucketed; distance 0 marks the diagonal)", fit=True)
    biaffine: bool = param(False, "add a biaffine term h_i^T W_tag h_j to each cell's tag scores", fit=True)
    hops: int = param(1, "iterations of GTS's mutual inference (0: none)", min=0, max=5, fit=True)
    dropout: float = param(0.3, "dropout on the embeddings and the BiLSTM outputs",
                           min=0.0, max=0.95, fit=True)
    word_dropout: float = param(0.05, "share of training tokens read as the unknown word", min=0.0, max=0.9,
                                fit=True)
    tag_weight: float = param(2.0, "loss weight of the cells whose gold tag is not N (N cells weigh 1)",
                              min=0.0, fit=True)
    epochs: int = param(20, "most training epochs", min=1, fit=True)
    batch_size: int = param(16, "sentences per training batch", min=1, fit=True)
    lr: float = param(5e-3, "Adam learning rate", min=0.0, fit=True)
    lr_decay: float = param(0.9, "linear learning-rate decay: the rate falls to lr * (1 - lr_decay) at the last "
                                 "epoch (0: constant)", min=0.0, max=1.0, fit=True)
    weight_decay: float = param(0.0, "Adam weight decay", min=0.0, fit=True)
    grad_clip: float = param(5.0, "largest gradient norm (0: no clipping)", min=0.0, fit=True)
    patience: int | None = param(5, "epochs without a better dev triplet F1 before stopping (None: run all "
                                    "epochs)", min=1, fit=True)
    max_tokens: int = param(100, "tokens of a sentence read; triplets past the cut are dropped in training",
                            min=1, fit=True)
    min_count: int = param(1, "training occurrences a word needs to get its own embedding", min=1, fit=True)
    max_vocab: int = param(50000, "largest word vocabulary (most frequent words first)", min=1, fit=True)
    init_embeddings: str | None = param("minilm", "initialise the learnt word embeddings from the packaged encoder's "
                                             "input embeddings (minilm: each word's mean word-piece vector of "
                                             "all-MiniLM-L6-v2, reduced to embedding_dim by PCA); None: random",
                                        choices=PIECE_CHOICES, fit=True)
    contextual: str | None = param("minilm", "also read each token's contextual vector from the packaged encoder "
                                        "(minilm: all-MiniLM-L6-v2 hidden states of contextual_layer, averaged "
                                        "over the word's pieces; computed once per sentence); None: none",
                                   choices=PIECE_CHOICES, fit=True)
    contextual_layer: int = param(4, "hidden layer of the encoder read by contextual (0: input embeddings, 6: last)",
                                  min=0, max=6, fit=True)
    frozen_vectors: str | None = param(None, "also read each word's fixed mean word-piece vector of the packaged "
                                            "encoder (minilm: all-MiniLM-L6-v2 input embeddings), which words "
                                            "unseen in training have too; None: no such input",
                                       choices=PIECE_CHOICES, fit=True)


#: the settings that shape the network (a warm start must share them)
_NETWORK_FIELDS = ("embedding_dim", "char_dim", "char_filters", "hidden_size", "pair_size", "distance", "biaffine",
                   "hops", "contextual", "contextual_layer", "frozen_vectors")


@dataclass(frozen=True)
class ScoredTriplet:
    """A predicted triplet and its confidence in [0, 1] (see :func:`triplet_confidence`)."""

    triplet: Triplet
    confidence: float


# -- the tag grid --------------------------------------------------------------------------------------
def tag_grid(n: int, triplets: Sequence[Triplet]) -> np.ndarray:
    """The gold tags of a sentence of ``n`` tokens as an ``(n, n)`` int array: tag ids of :data:`TAGS` in
    the upper triangle (diagonal included), -1 below it. Triplets reaching past ``n`` are left out."""
    grid = np.full((n, n), -1, dtype=np.int64)
    grid[np.triu_indices(n)] = N_TAG
    kept = [t for t in triplets if t.max_index() < n]
    for t in kept:
        for span, tag in ((t.aspect, A_TAG), (t.opinion, O_TAG)):
            for i in span:
                for j in span:
                    if i <= j:
                        grid[i, j] = tag
    for t in kept:
        pol = POLARITY_TAG[t.polarity]
        for i in t.aspect:
            for j in t.opinion:
                grid[min(i, j), max(i, j)] = pol
    return grid


def _spans(tags: np.ndarray, tag: int) -> list[tuple[int, ...]]:
    """Runs of consecutive diagonal cells tagged ``tag`` (as GTS decodes terms)."""
    out: list[tuple[int, ...]] = []
    run: list[int] = []
    for i in range(tags.shape[0]):
        if tags[i, i] == tag:
            run.append(i)
        elif run:
            out.append(tuple(run))
            run = []
    if run:
        out.append(tuple(run))
    return out


def _vote(tags: np.ndarray, aspect: Sequence[int], opinion: Sequence[int]) -> int | None:
    """The majority polarity tag among the pair cells of ``aspect`` and ``opinion`` (None when none)."""
    votes = Counter(int(tags[min(i, j), max(i, j)]) for i in aspect for j in opinion)
    best = max(_TIE_ORDER, key=lambda t: (votes[t], -_TIE_ORDER.index(t)))
    return best if votes[best] > 0 else None


def decode_grid(tags: np.ndarray) -> list[Triplet]:
    """The triplets of an ``(n, n)`` grid of tag ids (upper triangle read; see the module docstring)."""
    tags = np.asarray(tags)
    aspects, opinions = _spans(tags, A_TAG), _spans(tags, O_TAG)
    out = []
    for a in aspects:
        for o in opinions:
            pol = _vote(tags, a, o)
            if pol is not None:
                out.append(Triplet(a, o, TAG_POLARITY[pol]))
    return sorted(out)


def triplet_confidence(triplet: Triplet, probs: np.ndarray) -> float:
    """The confidence of ``triplet`` given the ``(n, n, len(TAGS))`` cell probabilities: the minimum of the
    aspect diagonal cells' ``A`` probabilities, the opinion diagonal cells' ``O`` probabilities and the
    mean probability of the triplet's polarity over its pair cells."""
    a = min(float(probs[i, i, A_TAG]) for i in triplet.aspect)
    o = min(float(probs[j, j, O_TAG]) for j in triplet.opinion)
    pol = POLARITY_TAG[triplet.polarity]
    p = float(np.mean([probs[min(i, j), max(i, j), pol] for i in triplet.aspect for j in triplet.opinion]))
    return min(a, o, p)


# -- vocabulary and batches ----------------------------------------------------------------------------
@dataclass
class _Encoded:
    words: list[int]
    chars: list[list[int]]
    grid: np.ndarray | None = None
    vectors: np.ndarray | None = None


class _Vocab:
    """Word ids (lower-cased words) and character ids (case kept); 0 is padding, 1 unknown."""

    def __init__(self, words: Sequence[str], chars: Sequence[str], pieces: PieceVectors | None = None) -> None:
        self.pieces = pieces
        self.words = list(words)
        self.chars = list(chars)
        self.word_id = {w: i + 2 for i, w in enumerate(self.words)}
        self.char_id = {ch: i + 2 for i, ch in enumerate(self.chars)}

    @classmethod
    def build(cls, sentences: Sequence[Sequence[str]], min_count: int, max_vocab: int,
              pieces: PieceVectors | None = None) -> _Vocab:
        counts = Counter(t.lower() for s in sentences for t in s)
        words = [w for w, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])) if n >= min_count][:max_vocab]
        chars = sorted({ch for s in sentences for t in s for ch in t[:MAX_WORD_CHARS]})
        return cls(words, chars, pieces)

    def encode(self, tokens: Sequence[str], triplets: Sequence[Triplet] | None = None,
               context: np.ndarray | None = None) -> _Encoded:
        words = [self.word_id.get(t.lower(), UNK) for t in tokens]
        chars = [[self.char_id.get(ch, UNK) for ch in t[:MAX_WORD_CHARS]] or [UNK] for t in tokens]
        grid = tag_grid(len(tokens), triplets) if triplets is not None else None
        vectors = np.stack([self.pieces.vector(t) for t in tokens]) if self.pieces is not None and tokens else None
        if context is not None:
            vectors = context if vectors is None else np.concatenate([vectors, context], axis=1)
        return _Encoded(words, chars, grid, vectors)


def _collate(batch: Sequence[_Encoded], device: Any, with_tags: bool = False) -> tuple[Any, ...]:
    import torch

    n, longest = len(batch), max(len(e.words) for e in batch)
    wchars = max(len(c) for e in batch for c in e.chars)
    words = np.zeros((n, longest), dtype=np.int64)
    chars = np.zeros((n, longest, wchars), dtype=np.int64)
    tags = np.full((n, longest, longest), -1, dtype=np.int64)
    for r, e in enumerate(batch):
        k = len(e.words)
        words[r, :k] = e.words
        for i, c in enumerate(e.chars):
            chars[r, i, : len(c)] = c
        if with_tags and e.grid is not None:
            tags[r, :k, :k] = e.grid
    vectors = None
    if batch[0].vectors is not None:
        dim = batch[0].vectors.shape[1]
        arr = np.zeros((n, longest, dim), dtype=np.float32)
        for r, e in enumerate(batch):
            arr[r, : len(e.words)] = e.vectors
        vectors = torch.from_numpy(arr).to(device)
    out = (torch.from_numpy(words).to(device), torch.from_numpy(chars).to(device), vectors)
    return out + (torch.from_numpy(tags).to(device),) if with_tags else out


# -- the network ---------------------------------------------------------------------------------------
def _build_net(n_words: int, n_chars: int, c: GridTaggerConfig, vector_dim: int = 0) -> Any:
    import torch
    from torch import nn

    n_tags = len(TAGS)

    class GridNet(nn.Module):
        """Embeddings (+ character CNN) -> BiLSTM -> cell scores, refined by ``hops`` rounds of mutual
        inference. The backward LSTM reads each sentence reversed within its own length, so padding never
        reaches a real position and a sentence gets the same scores whatever it is batched with."""

        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(n_words, c.embedding_dim, padding_idx=PAD)
            width = c.embedding_dim + vector_dim
            if c.char_dim > 0:
                self.char_emb = nn.Embedding(n_chars, c.char_dim, padding_idx=PAD)
                self.char_conv = nn.Conv1d(c.char_dim, c.char_filters, kernel_size=3, padding=1)
                width += c.char_filters
            self.fwd = nn.LSTM(width, c.hidden_size, batch_first=True)
            self.bwd = nn.LSTM(width, c.hidden_size, batch_first=True)
            self.drop = nn.Dropout(c.dropout)
            h2 = 2 * c.hidden_size
            self.left = nn.Linear(h2, c.pair_size)
            self.right = nn.Linear(h2, c.pair_size, bias=False)
            self.out = nn.Linear(c.pair_size, n_tags)
            if c.distance:
                self.dist = nn.Embedding(len(_DISTANCE_BUCKETS) + 1, c.pair_size)
            if c.biaffine:
                self.bi = nn.Parameter(torch.zeros(n_tags, h2, h2))
            self.hop_layers = nn.ModuleList(nn.Linear(c.pair_size + 3 * n_tags, c.pair_size) for _ in range(c.hops))

        def buckets(self, device: Any) -> torch.Tensor:
            return torch.tensor(_DISTANCE_BUCKETS, device=device)

        def encode(self, words: torch.Tensor, chars: torch.Tensor, vectors: torch.Tensor | None) -> torch.Tensor:
            length = (words != PAD).sum(dim=1).clamp(min=1).unsqueeze(1)  # B, 1
            pos = torch.arange(words.shape[1], device=words.device).unsqueeze(0)  # 1, T
            real = pos < length
            x = self.emb(words)
            if vectors is not None:
                x = torch.cat([x, vectors], dim=2)
            if c.char_dim > 0:
                b, t, k = chars.shape
                ce = self.char_emb(chars.view(b * t, k)).transpose(1, 2)  # BT, D, K
                cf = self.char_conv(ce).masked_fill((chars.view(b * t, 1, k) == PAD), float("-inf"))
                cf = cf.max(dim=2).values.clamp(min=-1e4).view(b, t, -1)  # words with no char: finite
                x = torch.cat([x, torch.relu(cf)], dim=2)
            x = self.drop(x)
            rev = torch.where(real, length - 1 - pos, pos).unsqueeze(-1)  # its own inverse
            hf, _ = self.fwd(x)
            hb, _ = self.bwd(x.gather(1, rev.expand(-1, -1, x.shape[2])))
            h = torch.cat([hf, hb.gather(1, rev.expand(-1, -1, hb.shape[2]))], dim=2)
            return self.drop(h)

        def forward(self, words: torch.Tensor, chars: torch.Tensor, vectors: torch.Tensor | None = None
                    ) -> torch.Tensor:
            """Tag logits, shape (B, T, T, len(TAGS)); ``vectors``: the fixed word vectors (B, T, D), when the
            model reads them."""
            h = self.encode(words, chars, vectors)
            t = h.shape[1]
            pre = self.left(h).unsqueeze(2) + self.right(h).unsqueeze(1)  # B, T, T, P
            if c.distance:
                pos = torch.arange(t, device=h.device)
                gap = (pos.unsqueeze(0) - pos.unsqueeze(1)).abs()  # T, T
                pre = pre + self.dist(torch.bucketize(gap, self.buckets(h.device), right=True))
            feats = torch.relu(pre)
            extra = torch.einsum("bih,khg,bjg->bijk", h, self.bi, h) if c.biaffine else None
            logits = self.out(feats) if extra is None else self.out(feats) + extra
            if c.hops:
                real = words != PAD
                cell = (real.unsqueeze(2) & real.unsqueeze(1)).unsqueeze(-1)
            for layer in self.hop_layers:
                masked = logits.masked_fill(~cell, -1e4)
                token = torch.maximum(masked.max(dim=1).values, masked.max(dim=2).values)  # B, T, C
                hop_in = torch.cat([feats, token.unsqueeze(2).expand(-1, -1, t, -1),
                                    token.unsqueeze(1).expand(-1, t, -1, -1), logits], dim=3)
                feats = torch.relu(layer(hop_in))
                logits = self.out(feats) if extra is None else self.out(feats) + extra
            return logits

    return GridNet()


class _LRU:
    """A dict bounded to ``size`` entries; the least recently used entry goes first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, np.ndarray] = OrderedDict()

    def get(self, key: Any) -> np.ndarray | None:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: Any, value: np.ndarray) -> np.ndarray:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)
        return value


class PieceVectors:
    """Each word's mean word-piece input embedding under the packaged all-MiniLM-L6-v2 encoder (uncased), for
    any word, standardised (the table's mean subtracted, divided by its standard deviation). Read from the
    encoder's files (tokenizer and weights), without loading the transformer; words are cached."""

    def __init__(self, name: str = "minilm") -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        from cfaug.local_models import default_encoder_path

        if name not in PIECE_CHOICES:
            raise ValueError(f"unknown word-piece vectors {name!r}; known: {', '.join(PIECE_CHOICES)}")
        path = default_encoder_path()
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        with safe_open(str(path / "model.safetensors"), "np") as fh:
            key = next(k for k in fh.keys() if k.endswith("word_embeddings.weight"))
            table = fh.get_tensor(key).astype(np.float32)
        self.table = (table - table.mean()) / table.std()
        self.unk = self.tokenizer.token_to_id("[UNK]") or 0
        self.dim = self.table.shape[1]
        self._cache = _LRU(50_000)

    def vector(self, word: str) -> np.ndarray:
        v = self._cache.get(word)
        if v is None:
            ids = self.tokenizer.encode(word, add_special_tokens=False).ids or [self.unk]
            v = self._cache.put(word, self.table[ids].mean(axis=0))
        return v


class ContextualVectors:
    """Each token's hidden state of the packaged encoder at one layer, averaged over the token's word pieces
    (tokens whose pieces fall past the encoder's window, or that have none, get zeros). Sentences are
    cached, so a sentence is encoded once per process.

    By default each sentence is encoded on its own (``batch_size=1``): in a padded batch a sentence's vectors
    differ in the last digits with the lengths of the other sentences, and through the cache they would then
    depend on what the process encoded before (a tagger trained after another one would not repeat its own
    run). Encoding alone costs about 2.5 times the batched time, some 10 s for 14res's training sentences."""

    def __init__(self, name: str = "minilm", layer: int = 3, batch_size: int = 1) -> None:
        from transformers import AutoModel, AutoTokenizer

        from cfaug.local_models import default_encoder_path, quiet_transformers

        if name not in PIECE_CHOICES:
            raise ValueError(f"unknown contextual vectors {name!r}; known: {', '.join(PIECE_CHOICES)}")
        quiet_transformers()
        path = default_encoder_path()
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).eval()
        self.layer, self.batch_size = layer, batch_size
        self.dim = int(self.model.config.hidden_size)
        if not 0 <= layer <= len(self.model.encoder.layer):
            raise ValueError(f"layer {layer} is not a hidden layer of {path} (0..{len(self.model.encoder.layer)})")
        self.model.encoder.layer = self.model.encoder.layer[:layer]  # the layers above are never needed
        self._cache = _LRU(10_000)

    def vectors(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One ``(len(tokens), dim)`` array per sentence."""
        import torch

        keys = [tuple(s) for s in sentences]
        found = {k: v for k in set(keys) if k and (v := self._cache.get(k)) is not None}
        todo = sorted({k for k in keys if k and k not in found}, key=lambda k: (len(k), k))
        with torch.inference_mode():
            for b in range(0, len(todo), self.batch_size):
                batch = todo[b: b + self.batch_size]
                enc = self.tokenizer([list(k) for k in batch], is_split_into_words=True, return_tensors="pt",
                                     padding=True, truncation=True, max_length=512)
                if self.layer == 0:
                    hidden = self.model.embeddings(input_ids=enc["input_ids"],
                                                   token_type_ids=enc.get("token_type_ids")).numpy()
                else:  # the model keeps its first ``layer`` layers: the last hidden state is that layer's
                    hidden = self.model(**enc).last_hidden_state.numpy()
                for r, k in enumerate(batch):
                    out = np.zeros((len(k), self.dim), dtype=np.float32)
                    count = np.zeros(len(k), dtype=np.float32)
                    for p, w in enumerate(enc.word_ids(r)):
                        if w is not None:
                            out[w] += hidden[r, p]
                            count[w] += 1
                    found[k] = self._cache.put(k, out / np.maximum(count, 1)[:, None])
        return [found[k] if k else np.zeros((0, self.dim), dtype=np.float32) for k in keys]


_CONTEXTUAL: dict[tuple[str, int], ContextualVectors] = {}


def contextual_vectors(name: str, layer: int) -> ContextualVectors:
    """The (process-wide, cached) :class:`ContextualVectors` of ``name`` and ``layer``."""
    if (name, layer) not in _CONTEXTUAL:
        _CONTEXTUAL[(name, layer)] = ContextualVectors(name, layer)
    return _CONTEXTUAL[(name, layer)]


_PIECES: dict[str, PieceVectors] = {}


def piece_vectors(name: str) -> PieceVectors:
    """The (process-wide, cached) :class:`PieceVectors` of ``name``."""
    if name not in _PIECES:
        _PIECES[name] = PieceVectors(name)
    return _PIECES[name]


def _pca_init(vectors: np.ndarray, dim: int) -> np.ndarray:
    """``vectors`` reduced to ``dim`` principal components, scaled to unit standard deviation (as
    ``nn.Embedding``'s random initialisation); zero-padded when ``dim`` exceeds the vectors' size."""
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(dim, vt.shape[0])
    out = np.zeros((len(vectors), dim), dtype=np.float32)
    out[:, :k] = centred @ vt[:k].T
    return out / max(float(out[:, :k].std()), 1e-8)


# -- the tagger ----------------------------------------------------------------------------------------
class GridTagger:
    """GTS triplet extraction (see the module docstring): :meth:`fit`, :meth:`predict` (triplets with
    confidences), :meth:`extract` (triplets), :meth:`evaluate`, :meth:`save` / :meth:`load`."""

    def __init__(self, config: GridTaggerConfig | None = None, *, seed: int = 0) -> None:
        self.config = config if config is not None else GridTaggerConfig()
        self.seed = seed
        self.vocab: _Vocab | None = None
        self.net: Any = None

    # -- training ---------------------------------------------------------------------------------------
    def _split_dev(self, train: Sequence[AsteExample]) -> tuple[list[AsteExample], list[AsteExample], str]:
        """A seeded 10% of ``train`` held out as dev data (the training data itself when it has < 2 rows)."""
        if len(train) < 2:
            return list(train), list(train), "training data (too few sentences to hold any out)"
        order = np.random.default_rng(self.seed).permutation(len(train))
        k = max(1, int(round(0.1 * len(train))))
        held = set(int(i) for i in order[:k])
        return ([e for i, e in enumerate(train) if i not in held], [e for i, e in enumerate(train) if i in held],
                "held-out 10% of train")

    def _cut(self, tokens: Sequence[str]) -> list[str]:
        return list(tokens)[: self.config.max_tokens]

    def fit(self, train: Sequence[AsteExample], dev: Sequence[AsteExample] | None = None,
            ctx: FitContext | None = None, *, warm_start: GridTagger | None = None) -> dict[str, Any]:
        """Train on ``train`` and keep the epoch with the best dev triplet F1 (``dev``, or without one a
        seeded 10% of ``train`` held out). ``ctx`` gives the device, progress, log and the folder of the
        (resumable) checkpoints; None: a temporary folder, no progress bar, CPU. The tagger's ``seed``
        governs initial weights, batch order and dropout (a given ``ctx``'s own seed is not used).
        ``warm_start``: a trained tagger whose vocabulary and weights (copied, the given tagger is left as it
        is) training continues from instead of new ones -- fine-tuning; its network settings must be this
        tagger's. Returns facts: epochs run, best epoch, best dev F1, seconds, vocabulary size, parameters..."""
        if not train:
            raise ValueError("no training sentences")
        if warm_start is not None:
            warm_start._need_net()
            theirs, ours = config_dict(warm_start.config), config_dict(self.config)
            differ = sorted(k for k in _NETWORK_FIELDS if theirs.get(k) != ours.get(k))
            if differ:
                raise ValueError(f"warm_start has other network settings than this tagger: {', '.join(differ)}")
        if ctx is None:
            with tempfile.TemporaryDirectory(prefix="cfaug-gts-") as tmp:
                return self._fit(train, dev, FitContext(seed=self.seed, progress=False, log=lambda m: None,
                                                        artifact_dir=Path(tmp)), warm_start)
        Path(ctx.artifact_dir).mkdir(parents=True, exist_ok=True)
        return self._fit(train, dev, dataclasses.replace(ctx, seed=self.seed), warm_start)

    def _fit(self, train: Sequence[AsteExample], dev: Sequence[AsteExample] | None, ctx: FitContext,
             warm_start: GridTagger | None = None) -> dict[str, Any]:
        import torch

        from cfaug.training.loop import seed_everything, train_loop

        t0 = time.perf_counter()
        c = self.config
        facts: dict[str, Any] = {"train": len(train)}
        if dev:
            dev = list(dev)
            facts["dev"] = "given"
        else:
            train, dev, facts["dev"] = self._split_dev(train)
        facts["dev_sentences"] = len(dev)
        sentences = [self._cut(e.tokens) for e in train]
        if warm_start is None:
            self.vocab = _Vocab.build(sentences, c.min_count, c.max_vocab, self._pieces())
        else:
            self.vocab = warm_start.vocab
            facts["warm_start"] = True
        examples = self._encode(sentences, [e.triplets for e in train])
        dropped = sum(len(e.triplets) for e in train) - sum(
            len([t for t in e.triplets if t.max_index() < len(s)]) for s, e in zip(sentences, train))
        seed_everything(self.seed)
        if warm_start is None:
            self.net = self._new_net()
            if c.init_embeddings:
                self._init_embeddings(c.init_embeddings)
        else:
            self.net = copy.deepcopy(warm_start.net).cpu()
        device = torch.device(ctx.device)
        gold = [e.triplets for e in dev]
        dev_tokens = [self._cut(e.tokens) for e in dev]
        dev_encoded = self._encode(dev_tokens)

        weight = torch.tensor([1.0] + [float(c.tag_weight)] * (len(TAGS) - 1), device=device)

        def step(model: Any, batch: list[_Encoded]) -> Any:
            words, chars, vectors, tags = _collate(batch, device, with_tags=True)
            if c.word_dropout > 0:
                drop = torch.rand(words.shape, device=device) < c.word_dropout
                words = words.masked_fill(drop & (words != PAD), UNK)
            logits = model(words, chars, vectors)
            mask = tags >= 0
            return torch.nn.functional.cross_entropy(logits[mask], tags[mask], weight=weight)

        def evaluate(model: Any) -> float:
            pred = self._predict_with(model, dev_tokens, 64, scored=False, encoded=dev_encoded)
            return triplet_scores(gold, pred)["f1"]

        self.net.to(device)
        optimizer = torch.optim.Adam(self.net.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        total = c.epochs * math.ceil(len(examples) / c.batch_size)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - c.lr_decay * min(k, total) / total)
        result = train_loop(self.net, examples, step, ctx, epochs=c.epochs, batch_size=c.batch_size,
                            optimizer=optimizer, scheduler=scheduler, grad_clip=c.grad_clip or None, evaluate=evaluate,
                            patience=c.patience, name="grid tagger", lengths=[len(e.words) for e in examples])
        self.net.eval()
        loop = result.facts()
        facts.update({"epochs": loop["epochs"], "best_epoch": loop["best_epoch"], "dev_f1": loop["best_score"],
                      "final_loss": loop["final_loss"], "resumed_from_epoch": loop["resumed_from_epoch"],
                      "history": result.history, "training_seconds": loop["seconds"],
                      "seconds": round(time.perf_counter() - t0, 2), "vocabulary": len(self.vocab.words),
                      "parameters": sum(p.numel() for p in self.net.parameters()),
                      "triplets_cut": dropped})
        return facts

    def _encode(self, sentences: Sequence[Sequence[str]], triplets: Sequence[Sequence[Triplet]] | None = None
                ) -> list[_Encoded]:
        assert self.vocab is not None
        c = self.config
        contexts: list[Any] = [None] * len(sentences)
        if c.contextual:
            contexts = contextual_vectors(c.contextual, c.contextual_layer).vectors(sentences)
        return [self.vocab.encode(s, triplets[k] if triplets is not None else None, contexts[k])
                for k, s in enumerate(sentences)]

    def _vector_dim(self) -> int:
        c = self.config
        return ((piece_vectors(c.frozen_vectors).dim if c.frozen_vectors else 0)
                + (contextual_vectors(c.contextual, c.contextual_layer).dim if c.contextual else 0))

    def _pieces(self) -> PieceVectors | None:
        return piece_vectors(self.config.frozen_vectors) if self.config.frozen_vectors else None

    def _new_net(self) -> Any:
        assert self.vocab is not None
        return _build_net(len(self.vocab.words) + 2, len(self.vocab.chars) + 2, self.config, self._vector_dim())

    def _init_embeddings(self, name: str) -> None:
        """The learnt embeddings of the vocabulary's words start from their word-piece vectors (PCA)."""
        import torch

        assert self.vocab is not None
        if len(self.vocab.words) < 2:
            return
        pieces = piece_vectors(name)
        vectors = _pca_init(np.stack([pieces.vector(w) for w in self.vocab.words]), self.config.embedding_dim)
        with torch.no_grad():
            self.net.emb.weight[2:] = torch.from_numpy(vectors)

    # -- prediction -------------------------------------------------------------------------------------
    def _predict_with(self, net: Any, sentences: Sequence[Sequence[str]], batch_size: int, scored: bool,
                      encoded: Sequence[_Encoded] | None = None) -> list[list[Any]]:
        """Decoded triplets (``scored``: with confidences) of ``sentences`` by ``net``; ``encoded``: the
        sentences already encoded (cut to max_tokens)."""
        import torch

        assert self.vocab is not None
        if encoded is None:
            encoded = self._encode([self._cut(s) for s in sentences])
        out: list[list[Any]] = [[] for _ in encoded]
        order = sorted((i for i in range(len(encoded)) if encoded[i].words), key=lambda i: len(encoded[i].words))
        device = next(net.parameters()).device
        was_training = net.training
        net.eval()
        with torch.inference_mode():
            for b in range(0, len(order), batch_size):
                idx = order[b: b + batch_size]
                words, chars, vectors = _collate([encoded[i] for i in idx], device)
                logits = net(words, chars, vectors).float()
                probs = torch.softmax(logits, dim=-1).cpu().numpy() if scored else None
                tags = logits.argmax(dim=-1).cpu().numpy()
                for r, i in enumerate(idx):
                    n = len(encoded[i].words)
                    triplets = decode_grid(tags[r, :n, :n])
                    out[i] = ([ScoredTriplet(t, triplet_confidence(t, probs[r])) for t in triplets]
                              if scored else triplets)
        net.train(was_training)
        return out

    def _need_net(self) -> None:
        if self.net is None or self.vocab is None:
            raise RuntimeError("GridTagger: fit or load it first")

    def predict(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> list[list[ScoredTriplet]]:
        """The triplets of each tokenized sentence with their confidences (see :func:`triplet_confidence`),
        sorted by position. Sentences longer than ``max_tokens`` are cut; an empty one has no triplet."""
        self._need_net()
        return self._predict_with(self.net, sentences, batch_size, scored=True)

    def extract(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> list[tuple[Triplet, ...]]:
        """The triplets of each tokenized sentence (no confidences)."""
        self._need_net()
        return [tuple(p) for p in self._predict_with(self.net, sentences, batch_size, scored=False)]

    def evaluate(self, examples: Sequence[AsteExample]) -> dict[str, Any]:
        """:func:`cfaug.aste.metrics.triplet_scores` of the predictions on ``examples`` against their gold
        triplets (gold triplets past ``max_tokens`` count as missed)."""
        return triplet_scores([e.triplets for e in examples], self.extract([e.tokens for e in examples]))

    # -- saving -----------------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> None:
        """Write ``grid_tagger.json`` (config, seed, vocabulary) and ``model.pt`` (weights) into ``folder``."""
        import torch

        self._need_net()
        assert self.vocab is not None
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.detach().cpu() for k, v in self.net.state_dict().items()}, folder / WEIGHTS)
        manifest = {"model": "gts-bilstm", "config": config_dict(self.config), "seed": self.seed,
                    "tags": list(TAGS), "words": self.vocab.words, "chars": self.vocab.chars}
        (folder / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: str | Path, device: str = "cpu") -> GridTagger:
        """The tagger :meth:`save` wrote to ``folder``, on ``device``."""
        import torch

        folder = Path(folder)
        path = folder / MANIFEST
        if not path.is_file() or not (folder / WEIGHTS).is_file():
            raise FileNotFoundError(f"{folder}: no {MANIFEST} and {WEIGHTS} (not a folder GridTagger.save wrote)")
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if list(manifest.get("tags", [])) != list(TAGS):
            raise ValueError(f"{path}: the saved tags {manifest.get('tags')} are not {list(TAGS)}")
        tagger = cls(build_config(GridTaggerConfig, manifest["config"], owner="grid tagger"),
                     seed=int(manifest.get("seed", 0)))
        tagger.vocab = _Vocab(manifest["words"], manifest["chars"], tagger._pieces())
        net = tagger._new_net()
        net.load_state_dict(torch.load(folder / WEIGHTS, map_location="cpu", weights_only=True))
        tagger.net = net.to(device).eval()
        return tagger
