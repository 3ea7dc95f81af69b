"""Train Dis-AE on counterfactual pairs and save it; load it back; reproduce data with it.

:func:`train_disae` builds the vocabulary from the pairs, holds out a share of them to choose the best
epoch (dev loss: reconstruction plus counterfactual reconstruction), and trains with
:func:`cfaug.training.loop.train_loop`: Adam (the paper: 5e-4) with a linear decay, one checkpoint per
epoch (a killed training resumes where it stopped), progress and the loss of every epoch. The loss weights
anneal by optimiser step (:func:`~cfaug.methods.lass.disae.annealed_weights`); the step count lives in the
model's state, so a resumed run anneals exactly as an uninterrupted one. The folder then holds
``disae.pt`` (weights and sizes) and ``vocab.json``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from cfaug.data.paired import TextPair, sentiment_polarity
from cfaug.seq2seq.decoding import pad_ids
from cfaug.methods.lass.disae import DisAE, DisAEConfig, LossWeights, annealed_weights
from cfaug.seq2seq.vocab import WordVocab
from cfaug.training.context import FitContext
from cfaug.training.loop import LoopResult, save_state, seed_everything, train_loop

MODEL_FILE = "disae.pt"
VOCAB_FILE = "vocab.json"


@dataclass(frozen=True)
class Pair:
    """Two texts with the same content and opposite sentiment: ``positive`` has label 1, ``negative`` 0."""

    positive: str
    negative: str


def sentiment_pairs(pairs: Sequence[TextPair]) -> tuple[list[Pair], int]:
    """The positive/negative pairs among ``pairs`` (read from a file by :func:`cfaug.data.paired.read_pairs`),
    whichever side the original is on, and how many were left out because their labels are not one
    positive and one negative."""
    out, left = [], 0
    for p in pairs:
        a, b = sentiment_polarity(p.original_label), sentiment_polarity(p.rewrite_label)
        if {a, b} != {"positive", "negative"}:
            left += 1
        else:
            out.append(Pair(p.original, p.rewrite) if a == "positive" else Pair(p.rewrite, p.original))
    return out, left


@dataclass
class TrainSettings:
    """How Dis-AE is trained (the paper's values where it gives them: Adam 5e-4 with linear decay, weights
    annealed up to alpha 5, beta 1, gamma 1; at most 70 tokens)."""

    embedding_dim: int = 128
    hidden_size: int = 256
    latent: int = 128
    dropout: float = 0.1
    epochs: int = 10
    batch_size: int = 64
    lr: float = 5e-4
    grad_clip: float | None = 5.0
    #: optimiser steps over which the loss weights rise to their limits (0 = half of the pair training)
    anneal_steps: int = 0
    limits: LossWeights = field(default_factory=LossWeights)
    max_tokens: int = 70
    min_count: int = 2
    max_vocab: int = 20000
    dev_share: float = 0.05
    #: epochs over the unpaired domain corpus before the pairs (reconstruction and the sentiment terms only;
    #: 0 = the paper, pairs only)
    pretrain_epochs: int = 0
    #: at most this many corpus texts are used for pretraining (a seeded sample)
    pretrain_max: int = 100000
    #: constant learning rate of the pretraining (an autoencoder learns to copy faster at a higher rate)
    pretrain_lr: float = 2e-3


def _pair_batch(batch: Sequence[tuple[list[int], list[int]]], device: Any,
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded positive ids, padded negative ids and their labels (1 and 0) of encoded pairs, on ``device``."""
    pos, neg = pad_ids([b[0] for b in batch]).to(device), pad_ids([b[1] for b in batch]).to(device)
    ones = torch.ones(len(batch), dtype=torch.long, device=device)
    return pos, neg, ones, 1 - ones


def train_disae(pairs: Sequence[Pair], ctx: FitContext, settings: TrainSettings | None = None,
                corpus: Sequence[tuple[str, int]] = ()) -> tuple[DisAE, WordVocab, dict[str, Any]]:
    """Train Dis-AE on ``pairs`` into ``ctx.artifact_dir`` (see the module docstring); returns the model
    (best epoch by dev loss), the vocabulary and facts for the run record.

    With ``corpus`` (texts and their class, 1 positive, 0 negative) and ``settings.pretrain_epochs``, the
    model first learns to reconstruct the domain's texts and to classify their sentiment
    (:meth:`~cfaug.methods.lass.disae.DisAE.corpus_losses`, checkpoint ``pretrain.pt``), then trains on the
    pairs with the whole loss, annealed from zero as without pretraining."""
    s = settings or TrainSettings()
    if len(pairs) < 2:
        raise ValueError(f"Dis-AE needs at least 2 counterfactual pairs to train on, got {len(pairs)}")
    order = list(range(len(pairs)))
    random.Random(ctx.seed).shuffle(order)
    corpus = list(corpus) if s.pretrain_epochs > 0 else []
    if len(corpus) > s.pretrain_max:
        corpus = random.Random(ctx.seed).sample(corpus, s.pretrain_max)
    n_dev = max(1, int(round(len(pairs) * s.dev_share))) if len(pairs) >= 20 and s.dev_share > 0 else 0
    dev = [pairs[i] for i in order[:n_dev]]
    train = [pairs[i] for i in order[n_dev:]]
    Path(ctx.artifact_dir).mkdir(parents=True, exist_ok=True)
    vocab_path = ctx.path(VOCAB_FILE)
    if vocab_path.exists():  # a resumed training keeps the vocabulary its checkpoint was made with
        vocab = WordVocab.load(vocab_path)
    else:
        vocab = WordVocab.build([t for p in train for t in (p.positive, p.negative)] + [t for t, _ in corpus],
                                s.min_count, s.max_vocab)
        vocab.save(vocab_path)
    encode = lambda p: (vocab.encode(p.positive, s.max_tokens), vocab.encode(p.negative, s.max_tokens))  # noqa: E731
    examples = [encode(p) for p in train]
    config = DisAEConfig(len(vocab), s.embedding_dim, s.hidden_size, s.latent, 2, s.dropout)
    seed_everything(ctx.seed)  # the initial weights depend on the seed only
    model = DisAE(config)
    model.register_buffer("steps", torch.zeros((), dtype=torch.long))
    pretrained = _pretrain(model, vocab, corpus, ctx, s) if corpus else None
    optimizer = torch.optim.Adam(model.parameters(), lr=s.lr)
    total_steps = s.epochs * -(-len(examples) // s.batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: max(0.0, 1.0 - k / max(1, total_steps)))

    anneal = s.anneal_steps or max(1, total_steps // 2)

    def step(m: DisAE, batch: list[tuple[list[int], list[int]]]) -> torch.Tensor:
        loss, _ = m.loss(*_pair_batch(batch, m.label_vectors.device), annealed_weights(int(m.steps), anneal, s.limits))
        m.steps += 1
        return loss

    dev_examples = [encode(p) for p in dev]

    def evaluate(m: DisAE) -> float:
        device = m.label_vectors.device
        total = 0.0
        for k in range(0, len(dev_examples), s.batch_size):
            chunk = dev_examples[k: k + s.batch_size]
            parts = m.losses(*_pair_batch(chunk, device))
            total += float(parts["rec"] + parts["cf"]) * len(chunk)
        return -total / len(dev_examples)

    result: LoopResult = train_loop(model, examples, step, ctx, epochs=s.epochs, batch_size=s.batch_size,
                                    optimizer=optimizer, scheduler=scheduler, grad_clip=s.grad_clip,
                                    evaluate=evaluate if dev_examples else None, name="Dis-AE",
                                    lengths=[max(len(a), len(b)) for a, b in examples])
    save_disae(model, ctx.artifact_dir)
    facts = {"pairs": len(pairs), "train_pairs": len(train), "dev_pairs": len(dev), "vocabulary": len(vocab),
             "parameters": sum(p.numel() for p in model.parameters()), "settings": _jsonable(asdict(s)),
             "steps": int(model.steps), "anneal_steps": anneal, **result.facts()}
    if result.best_score is not None:
        facts["dev_loss"] = round(-result.best_score, 4)
    if pretrained is not None:
        facts["pretraining"] = {"texts": len(corpus), **pretrained.facts()}
    return model, vocab, facts


def _pretrain(model: DisAE, vocab: WordVocab, corpus: Sequence[tuple[str, int]], ctx: FitContext,
              s: TrainSettings) -> LoopResult:
    """Reconstruction and sentiment terms on single corpus texts (resumable, checkpoint ``pretrain.pt``)."""
    examples = [(vocab.encode(t, s.max_tokens), int(c)) for t, c in corpus]
    optimizer = torch.optim.Adam(model.parameters(), lr=s.pretrain_lr)

    def step(m: DisAE, batch: list[tuple[list[int], int]]) -> torch.Tensor:
        device = m.label_vectors.device
        parts = m.corpus_losses(pad_ids([b[0] for b in batch]).to(device),
                                torch.tensor([b[1] for b in batch], dtype=torch.long, device=device))
        return parts["rec"] + parts["emo"]

    return train_loop(model, examples, step, ctx, epochs=s.pretrain_epochs, batch_size=s.batch_size,
                      optimizer=optimizer, grad_clip=s.grad_clip, name="Dis-AE pretraining on the corpus",
                      checkpoint="pretrain.pt", lengths=[len(e[0]) for e in examples])


def save_disae(model: DisAE, folder: Path) -> None:
    state = {k: v for k, v in model.state_dict().items() if k != "steps"}
    save_state(Path(folder) / MODEL_FILE, {"config": asdict(model.config), "state": state})


def load_disae(folder: str | Path, device: str = "cpu") -> tuple[DisAE, WordVocab]:
    """The model and vocabulary :func:`train_disae` saved in ``folder``."""
    folder = Path(folder)
    if not (folder / MODEL_FILE).exists() or not (folder / VOCAB_FILE).exists():
        raise FileNotFoundError(f"{folder} holds no trained Dis-AE ({MODEL_FILE} and {VOCAB_FILE})")
    saved = torch.load(folder / MODEL_FILE, map_location=device, weights_only=True)
    model = DisAE(DisAEConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    return model.to(device).eval(), WordVocab.load(folder / VOCAB_FILE)


def reproduce(model: DisAE, vocab: WordVocab, content: Sequence[str], sentiment: Sequence[str], *,
              max_tokens: int = 70, beam: int = 1, batch_size: int = 256, temperature: float = 0.0,
              top_p: float = 1.0, seeds: Sequence[int] | None = None) -> list[str]:
    """Texts with the content of ``content[i]`` and the sentiment of ``sentiment[i]`` (the paper's data
    reproduction: a positive parent's content, a negative parent's sentiment), decoded in batches: by beam
    search (greedy with ``beam=1``), or sampled when ``temperature > 0`` (nucleus ``top_p``; text ``i`` from a
    random stream seeded with ``seeds[i]``, default ``i``; see :meth:`LatentDecoder.generate`)."""
    if len(content) != len(sentiment):
        raise ValueError(f"got {len(content)} content parents but {len(sentiment)} sentiment parents")
    if seeds is not None and len(seeds) != len(content):
        raise ValueError(f"got {len(seeds)} seeds for {len(content)} texts")
    device = model.label_vectors.device
    out: list[str] = []
    for k in range(0, len(content), batch_size):
        c = pad_ids([vocab.encode(t, max_tokens) for t in content[k: k + batch_size]]).to(device)
        e = pad_ids([vocab.encode(t, max_tokens) for t in sentiment[k: k + batch_size]]).to(device)
        rows = list(seeds[k: k + batch_size]) if seeds is not None else list(range(k, k + c.shape[0]))
        out += [vocab.decode(ids) for ids in model.generate(model.transfer(c, e), max_tokens=max_tokens, beam=beam,
                                                            temperature=temperature, top_p=top_p, seeds=rows)]
    return out


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
