"""A checkpointed, seeded training loop for torch models, shared by the methods that learn.

The loop runs epochs of mini-batches, shows progress (epoch, loss, dev score), keeps the best state by a
dev score, and after every epoch writes one checkpoint (model, optimizer, scheduler, random states,
history) into the artifact folder. Called again after a kill, it resumes from that checkpoint and ends in
the same state as an uninterrupted run: the order of examples in epoch ``e`` depends only on the seed
and ``e``, and torch's random state (dropout) is saved with the checkpoint.

>>> result = train_loop(model, examples, step, ctx, epochs=5, lr=1e-3, batch_size=32,
...                     evaluate=lambda m: dev_accuracy(m))          # doctest: +SKIP

``step(model, batch) -> loss tensor`` computes the loss of one batch (the loop does backward, clipping
and the optimizer step); ``evaluate(model) -> float`` (higher is better) runs after every epoch when given.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cfaug.training.context import FitContext

CHECKPOINT = "checkpoint.pt"


@dataclass
class LoopResult:
    """What a finished loop reports: per-epoch history, the best dev score and its epoch, and whether it
    resumed from a checkpoint."""

    history: list[dict[str, float]] = field(default_factory=list)
    best_score: float | None = None
    best_epoch: int | None = None
    resumed_from: int = 0
    seconds: float = 0.0

    def facts(self) -> dict[str, Any]:
        return {"epochs": len(self.history), "best_score": self.best_score, "best_epoch": self.best_epoch,
                "resumed_from_epoch": self.resumed_from, "final_loss": self.history[-1]["loss"] if self.history else None,
                "seconds": round(self.seconds, 2)}


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA)."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The order of ``n`` examples in ``epoch``: a function of the seed and the epoch only."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def bucketed_batches(order: np.ndarray, lengths: Sequence[int], batch_size: int, seed: int, epoch: int,
                     window: int = 50) -> list[np.ndarray]:
    """Batches of similar length: the shuffled ``order`` is cut into windows of ``window`` batches, each
    window sorted by length and cut into batches, and the batches are shuffled. Padding shrinks, the
    batches still differ from epoch to epoch, and everything is a function of the seed and the epoch."""
    batches: list[np.ndarray] = []
    span = batch_size * window
    for k in range(0, len(order), span):
        chunk = order[k: k + span]
        chunk = chunk[np.argsort([lengths[i] for i in chunk], kind="stable")]
        batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
    perm = np.random.default_rng([seed, epoch, 1]).permutation(len(batches))
    return [batches[i] for i in perm]


def train_loop(model: Any, examples: Sequence[Any], step: Callable[[Any, list[Any]], Any], ctx: FitContext, *,
               epochs: int, lr: float = 1e-3, batch_size: int = 32, weight_decay: float = 0.0,
               grad_clip: float | None = 1.0, evaluate: Callable[[Any], float] | None = None,
               patience: int | None = None, optimizer: Any = None, scheduler: Any = None,
               on_epoch: Callable[[int, Any], None] | None = None, name: str = "model",
               checkpoint: str = CHECKPOINT, lengths: Sequence[int] | None = None) -> LoopResult:
    """Train ``model`` on ``examples`` for ``epochs`` (see the module docstring).

    ``optimizer`` defaults to Adam with ``lr`` and ``weight_decay``; ``scheduler`` (optional) steps once
    per batch. With ``evaluate``, the best epoch's weights are restored at the end and ``patience`` epochs
    without improvement stop early. With ``lengths`` (one per example), batches group examples of similar
    length (:func:`bucketed_batches`), which saves the padding of sequence models. ``on_epoch(epoch, model)``
    runs after each epoch (e.g. to anneal loss weights); it must depend on the epoch only, so that a resumed
    run behaves the same. The model is moved to ``ctx.device``.
    """
    import torch

    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    if not examples:
        raise ValueError(f"no training examples for {name}")
    device = torch.device(ctx.device)
    model.to(device)
    optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    result = LoopResult()
    best_state: dict[str, Any] | None = None
    start_epoch, stale = 0, 0
    ckpt_path = ctx.path(checkpoint)
    if ckpt_path.exists():
        state = torch.load(ckpt_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if scheduler is not None and state.get("scheduler") is not None:
            scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        start_epoch, stale = state["epoch"], state["stale"]
        result.history = state["history"]
        result.best_score, result.best_epoch = state["best_score"], state["best_epoch"]
        best_state = state.get("best_state")
        result.resumed_from = start_epoch
        ctx.log(f"{name}: resuming after epoch {start_epoch} from {ckpt_path}")
    else:
        seed_everything(ctx.seed)
    t0 = time.perf_counter()
    bar = ctx.bar(epochs, f"training {name}", unit="epoch", initial=start_epoch)
    n_batches = math.ceil(len(examples) / batch_size)
    for epoch in range(start_epoch, epochs):
        if patience is not None and stale >= patience:
            break
        model.train()
        order = epoch_order(len(examples), ctx.seed, epoch)
        if lengths is not None:
            index_batches = bucketed_batches(order, lengths, batch_size, ctx.seed, epoch)
        else:
            index_batches = [order[b * batch_size: (b + 1) * batch_size] for b in range(n_batches)]
        total, seen = 0.0, 0
        for index in index_batches:
            batch = [examples[i] for i in index]
            loss = step(model, batch)
            optimizer.zero_grad()
            loss.backward()
            if grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            total += float(loss.detach()) * len(batch)
            seen += len(batch)
        entry = {"epoch": epoch + 1, "loss": total / max(seen, 1)}
        if on_epoch is not None:
            on_epoch(epoch + 1, model)
        if evaluate is not None:
            model.eval()
            with torch.no_grad():
                score = float(evaluate(model))
            entry["dev"] = score
            if result.best_score is None or score > result.best_score:
                result.best_score, result.best_epoch, stale = score, epoch + 1, 0
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                stale += 1
        result.history.append(entry)
        save_state(ckpt_path, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                               "scheduler": scheduler.state_dict() if scheduler is not None else None,
                               "torch_rng": torch.get_rng_state(), "epoch": epoch + 1, "stale": stale,
                               "history": result.history, "best_score": result.best_score,
                               "best_epoch": result.best_epoch, "best_state": best_state})
        bar.update(1)
        bar.set_postfix({k: round(v, 4) for k, v in entry.items() if k != "epoch"})
        ctx.log(f"{name}: epoch {epoch + 1}/{epochs} loss {entry['loss']:.4f}"
                + (f" dev {entry['dev']:.4f}" if "dev" in entry else ""))
    bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    result.seconds = time.perf_counter() - t0
    return result


def save_state(path: os.PathLike[str], state: dict[str, Any]) -> None:
    """``torch.save`` to a temporary file, then renamed over ``path``: a kill never leaves half a file."""
    import torch

    tmp = f"{os.fspath(path)}.tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)
