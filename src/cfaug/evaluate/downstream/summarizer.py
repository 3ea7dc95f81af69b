"""An unsupervised opinion summarizer trained here: a BiMeanVAE-style sentence autoencoder whose summary of
a group of reviews decodes averaged latent codes (the simple averaging of Coop(a)).

* **Model** (:class:`MeanVAE`): word embeddings, a bidirectional LSTM, the mean of its states over the real
  tokens, and linear maps to the mean and log-variance of a Gaussian latent; an LSTM decoder conditioned on
  the latent (:class:`~cfaug.seq2seq.decoding.LatentDecoder`, shared with Dis-AE). Loss: token
  cross-entropy plus the KL divergence to N(0, I), its weight annealed from 0 to ``kl_weight`` and the KL
  floored at ``free_bits`` nats per text (so the decoder cannot ignore the latent). ``kl_weight=0`` is a plain
  autoencoder (the latent is the posterior mean). The defaults (weight 0.1, 20 free nats, 3 epochs) were
  chosen on reconstruction: with weight 1 and 4 nats the latent kept too little of a sentence for its
  sentiment to survive decoding (a negative sentence came back negative 3% of the time against 56%).
* **Training** (:func:`train_summarizer`) on the sentences of a corpus with the shared checkpointed loop.
* **Summarizing** (:func:`summarize`): every sentence of the group's reviews is encoded (posterior
  means); the codes are clustered into ``sentences`` groups (k-means, seeded), the largest cluster first, and
  each cluster gives one summary sentence. ``select="mean"`` decodes the cluster's centroid (Coop(a)'s simple
  average). ``select="overlap"`` is Coop's search: the centroid and the means of every subset of at most
  ``subset_size`` of the cluster's codes are decoded, and the candidate whose words overlap most with the
  group's reviews (unigram F1, ROUGE-1 against the input; the centroid on a tie) is kept. A group whose
  reviews are mostly negative has mostly negative codes, so its summary should read negative, unless the
  decoder has rarely seen negative text, which is the bias LASS's data is meant to remove.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from cfaug.data.sentences import split_sentences
from cfaug.seq2seq.decoding import LatentDecoder, mean_pooled, pad_ids
from cfaug.seq2seq.vocab import BOS, EOS, PAD, UNK, WordVocab
from cfaug.training.context import FitContext
from cfaug.training.loop import save_state, seed_everything, train_loop

MODEL_FILE = "summarizer.pt"
VOCAB_FILE = "vocab.json"


@dataclass
class SummarizerSettings:
    """Sizes and training of the summarizer."""

    embedding_dim: int = 128
    hidden_size: int = 256
    latent: int = 128
    dropout: float = 0.1
    epochs: int = 3
    batch_size: int = 64
    lr: float = 2e-3
    kl_anneal_steps: int = 3000
    kl_weight: float = 0.1
    free_bits: float = 20.0
    max_tokens: int = 40
    max_vocab: int = 20000
    min_count: int = 2


class MeanVAE(LatentDecoder):
    """See the module docstring."""

    def __init__(self, vocab_size: int, s: SummarizerSettings) -> None:
        super().__init__()
        self.sizes = {"vocab_size": vocab_size, "embedding_dim": s.embedding_dim, "hidden_size": s.hidden_size,
                      "latent": s.latent, "dropout": s.dropout}
        self.embedding = nn.Embedding(vocab_size, s.embedding_dim, padding_idx=PAD)
        self.encoder = nn.LSTM(s.embedding_dim, s.hidden_size, batch_first=True, bidirectional=True)
        self.to_mu = nn.Linear(2 * s.hidden_size, s.latent)
        self.to_logvar = nn.Linear(2 * s.hidden_size, s.latent)
        self.build_decoder(vocab_size, s.embedding_dim, s.hidden_size, s.latent, s.dropout)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, log-variance) of the latent of each padded row of ``ids``."""
        h, _, _ = mean_pooled(self.embedding, self.encoder, self.drop, ids)
        return self.to_mu(h), self.to_logvar(h)

    def loss(self, ids: torch.Tensor, kl_weight: float, free_bits: float, sample: bool = True,
             ) -> tuple[torch.Tensor, dict[str, float]]:
        """Reconstruction plus weighted KL; ``sample=False`` decodes the posterior mean (a plain autoencoder)."""
        mu, logvar = self.encode(ids)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp() if sample else mu
        rec = self.reconstruction(z, ids)
        kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=-1)).mean()
        tokens = float((ids != PAD).sum()) / ids.shape[0]  # reconstruction is per token; KL per text
        total = rec + kl_weight * torch.clamp(kl, min=free_bits) / tokens
        return total, {"rec": float(rec.detach()), "kl": float(kl.detach())}


def train_summarizer(texts: Sequence[str], ctx: FitContext, settings: SummarizerSettings | None = None,
                     ) -> tuple[MeanVAE, WordVocab, dict[str, Any]]:
    """Train the summarizer on ``texts`` (sentences) into ``ctx.artifact_dir``; resumable after a kill."""
    s = settings or SummarizerSettings()
    if len(texts) < 2:
        raise ValueError(f"the summarizer needs at least 2 training texts, got {len(texts)}")
    Path(ctx.artifact_dir).mkdir(parents=True, exist_ok=True)
    vocab_path = ctx.path(VOCAB_FILE)
    vocab = WordVocab.load(vocab_path) if vocab_path.exists() else WordVocab.build(texts, s.min_count, s.max_vocab)
    vocab.save(vocab_path)
    examples = [vocab.encode(t, s.max_tokens) for t in texts]
    seed_everything(ctx.seed)
    model = MeanVAE(len(vocab), s)
    optimizer = torch.optim.Adam(model.parameters(), lr=s.lr)

    def step(m: MeanVAE, batch: list[list[int]]) -> torch.Tensor:
        weight = s.kl_weight * (1.0 if s.kl_anneal_steps <= 0 else min(1.0, int(m.steps) / s.kl_anneal_steps))
        loss, _ = m.loss(pad_ids(batch).to(m.steps.device), weight, s.free_bits, sample=s.kl_weight > 0)
        m.steps += 1
        return loss

    result = train_loop(model, examples, step, ctx, epochs=s.epochs, batch_size=s.batch_size, optimizer=optimizer,
                        grad_clip=5.0, name="summarizer", lengths=[len(e) for e in examples])
    save_state(ctx.path(MODEL_FILE), {"sizes": model.sizes, "settings": asdict(s),
                                      "state": {k: v for k, v in model.state_dict().items() if k != "steps"}})
    facts = {"texts": len(texts), "vocabulary": len(vocab), "parameters": sum(p.numel() for p in model.parameters()),
             **result.facts()}
    return model.eval(), vocab, facts


def load_summarizer(folder: str | Path, device: str = "cpu") -> tuple[MeanVAE, WordVocab]:
    """The summarizer :func:`train_summarizer` saved in ``folder``."""
    folder = Path(folder)
    saved = torch.load(folder / MODEL_FILE, map_location=device, weights_only=True)
    s = SummarizerSettings(**saved["settings"])
    model = MeanVAE(saved["sizes"]["vocab_size"], s)
    missing, unexpected = model.load_state_dict(saved["state"], strict=False)
    missing = sorted(set(missing) - {"steps"})  # the step count is training state, not saved
    if missing or unexpected:
        raise ValueError(f"{folder / MODEL_FILE} does not match the summarizer: missing {missing}, "
                         f"unexpected {sorted(unexpected)}")
    return model.to(device).eval(), WordVocab.load(folder / VOCAB_FILE)


#: how :func:`summarize` chooses each summary sentence (see the module docstring)
SELECTIONS = ("mean", "overlap")
_SPECIAL = (PAD, UNK, BOS, EOS)


def _overlap(candidate: Sequence[int], source: Counter[int]) -> float:
    """Unigram F1 of the token ids ``candidate`` against the multiset ``source`` (special tokens left out)."""
    mine = Counter(i for i in candidate if i not in _SPECIAL)
    common = sum((mine & source).values())
    return 0.0 if not common else 2 * common / (sum(mine.values()) + sum(source.values()))


@torch.no_grad()
def summarize(model: MeanVAE, vocab: WordVocab, reviews: Sequence[str], *, sentences: int = 3, beam: int = 4,
              max_tokens: int = 40, seed: int = 0, select: str = "mean", subset_size: int = 1) -> list[str]:
    """The summary sentences of one group of ``reviews`` (see the module docstring for ``select`` and
    ``subset_size``)."""
    import numpy as np
    from sklearn.cluster import KMeans

    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {', '.join(SELECTIONS)}, got {select!r}")
    if subset_size < 1:
        raise ValueError(f"subset_size must be at least 1, got {subset_size}")
    parts = [x for r in reviews for x in split_sentences(r)]
    if not parts:
        return []
    device = next(model.parameters()).device
    encoded = [vocab.encode(x, max_tokens) for x in parts]
    mu, _ = model.encode(pad_ids(encoded).to(device))
    codes = mu.cpu().numpy()
    k = max(1, min(sentences, len(parts)))
    if k == 1:
        labels, centers = np.zeros(len(parts), dtype=int), codes.mean(axis=0, keepdims=True)
    else:
        km = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(codes)
        labels, centers = km.labels_, km.cluster_centers_
    order = np.argsort(-np.bincount(labels, minlength=k), kind="stable")
    # candidates per cluster: its centroid first, then, for "overlap", the means of its smaller subsets
    subsets = []
    for c in order:
        m = [int(i) for i in np.flatnonzero(labels == c)]
        smaller = [s for r in range(1, min(subset_size, len(m) - 1) + 1) for s in itertools.combinations(m, r)]
        subsets.append([centers[c]] + ([codes[list(s)].mean(axis=0) for s in smaller] if select == "overlap" else []))
    means = np.stack([z for cluster in subsets for z in cluster])
    decoded = model.generate(torch.tensor(means, dtype=torch.float32, device=device), max_tokens=max_tokens,
                             beam=beam)
    source = Counter(i for ids in encoded for i in ids if i not in _SPECIAL)
    out: list[str] = []
    start = 0
    for cluster in subsets:
        options = decoded[start: start + len(cluster)]
        start += len(cluster)
        text = vocab.decode(max(options, key=lambda ids: _overlap(ids, source)))  # the first on a tie
        if text and text not in out:
            out.append(text)
    return out
