"""Reinforcement learning of the generator (the paper's section 4.3): PPO with the reward of equation 11,

    r(s_ij, l_i, d_j) = f_flu(s_ij) + f_ali(s_ij, l_i) - pe_len(s_ij, d_j),
    pe_len(s, d) = max(len(d) - len(s), 0)^2 / len(d),

for a sentence ``s_ij`` written from the label of one pool entry and the template of another with as many
triplets; ``len(d)`` is the number of nodes of the template and ``len(s)`` the sentence's tokens. ``f_flu``
and ``f_ali`` are the discriminators' scores on ``reward_scale``: their probabilities (``prob``, in [0, 1]) or
their log-odds (``logit``, the paper's scores; :func:`cfaug.judges.aste_discriminators.log_odds`). The
history and the summary record the mean probabilities of both discriminators and the mean length penalty
next to the reward, whatever the scale, so that a rise of the reward can be read against them. The KL
penalty to the supervised generator, GAE, reward clipping and scaling, advantage normalisation and the
learning-rate decay are :class:`cfaug.training.ppo.Seq2SeqPPO`'s. A checkpoint is written every
``save_every`` steps; called again after a kill, tuning resumes from it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.methods.t2s.generator import Generator, condition_text
from cfaug.methods.t2s.pool import n_triplets
from cfaug.nlp.templates import template_size


def length_penalty(sentence: str, template: str) -> float:
    """Equation 12: how much shorter than its template a sentence is, squared, over the template's size."""
    d = template_size(template)
    if d == 0:
        return 0.0
    return max(d - len(sentence.split()), 0) ** 2 / d


class Pairing:
    """Draws (label entry, template entry) pairs with the same number of triplets and different entries
    (the synthesis rule of section 4.4), seeded by a step or item."""

    def __init__(self, labels: Sequence[dict[str, Any]], templates: Sequence[dict[str, Any]]) -> None:
        self.labels = list(labels)
        self.by_count: dict[int, list[int]] = defaultdict(list)
        self.templates = list(templates)
        for k, e in enumerate(self.templates):
            self.by_count[n_triplets(e)].append(k)

    def compatible(self, label: dict[str, Any]) -> list[int]:
        return self.by_count.get(n_triplets(label), [])

    def draw(self, rng: np.random.Generator, label: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]] | None:
        for _ in range(20):
            lab = label if label is not None else self.labels[int(rng.integers(len(self.labels)))]
            pool = self.compatible(lab)
            if not pool:
                if label is not None:
                    return None
                continue
            others = pool if len(pool) > 3 else [k for k in pool if self.templates[k]["id"] != lab["id"]]
            if not others:
                if label is not None:
                    return None
                continue
            tpl = self.templates[others[int(rng.integers(len(others)))]]
            if tpl["id"] != lab["id"]:
                return lab, tpl
        return None


def rewards(sentences: Sequence[str], pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], fluency: Any,
            alignment: Any, scale: str = "prob") -> tuple[np.ndarray, dict[str, float]]:
    """Equation 11 for each sentence, with the discriminators read on ``scale`` (``prob`` or ``logit``), and
    the means of its parts: ``fluency`` and ``alignment`` are always mean probabilities; with ``logit`` the
    means of the terms the reward added are ``fluency_logit`` and ``alignment_logit``."""
    from cfaug.judges.aste_discriminators import on_scale

    p_flu = np.asarray(fluency.fluency(sentences), dtype=float)
    p_ali = np.asarray(alignment.alignment([lab["label_seq"].lower() for lab, _ in pairs], sentences), dtype=float)
    flu, ali = on_scale(p_flu, scale), on_scale(p_ali, scale)
    pen = np.array([length_penalty(s, tpl["template"]) for s, (_, tpl) in zip(sentences, pairs)])
    parts = {"fluency": float(p_flu.mean()), "alignment": float(p_ali.mean()), "length_penalty": float(pen.mean())}
    if scale != "prob":
        parts.update({f"fluency_{scale}": float(flu.mean()), f"alignment_{scale}": float(ali.mean())})
    return flu + ali - pen, parts


def ppo_tune(generator: Generator, fluency: Any, alignment: Any, pairing: Pairing, *, steps: int, batch_size: int,
             config: Any, seed: int, folder: Path, device: str = "cpu", save_every: int = 10,
             log: Callable[[str], None] = print, bar: Any = None, reward_scale: str = "prob") -> dict[str, Any]:
    """Tune ``generator`` in place for ``steps`` PPO steps, the discriminators read on ``reward_scale`` in the
    reward; returns the summary facts (the per-step history is written to ``ppo_history.json``)."""
    import torch

    from cfaug.training.loop import save_state
    from cfaug.training.ppo import Seq2SeqPPO

    folder.mkdir(parents=True, exist_ok=True)
    ckpt = folder / "ppo_checkpoint.pt"
    trainer = Seq2SeqPPO(generator.model, config, total_steps=steps, device=device, seed=seed)
    history: list[dict[str, float]] = []
    start = 0
    if ckpt.exists():
        state = torch.load(ckpt, map_location=device, weights_only=False)
        trainer.load_state_dict(state["trainer"])
        history, start = state["history"], state["step"]
        torch.set_rng_state(state["torch_rng"])
        log(f"ppo: resuming after step {start} from {ckpt}")
    else:
        torch.manual_seed(seed)
    if bar is not None:
        bar.update(start)
    for step in range(start, steps):
        rng = np.random.default_rng([seed, step])
        pairs = [p for p in (pairing.draw(rng) for _ in range(batch_size)) if p is not None]
        if not pairs:
            raise ValueError("no (label, template) pair with the same number of triplets in the pool")
        conds = [condition_text(lab["label_seq"], tpl["template"]) for lab, tpl in pairs]
        ids, mask = generator.encode(conds)
        responses = trainer.generate(ids, mask)
        sentences = generator.decode(responses, conds)
        scores, parts = rewards(sentences, pairs, fluency, alignment, reward_scale)
        stats = trainer.step(ids, mask, responses, torch.tensor(scores, dtype=torch.float32))
        entry = {"step": step + 1, "reward": float(scores.mean()), **parts,
                 **{k: float(v) for k, v in stats.items() if k in ("kl", "policy_loss", "value_loss", "lr")}}
        history.append(entry)
        if bar is not None:
            bar.update(1)
            bar.set_postfix({"reward": round(entry["reward"], 3), "ali": round(parts["alignment"], 3)})
        if (step + 1) % save_every == 0 or step + 1 == steps:
            save_state(ckpt, {"trainer": trainer.state_dict(), "history": history, "step": step + 1,
                              "torch_rng": torch.get_rng_state()})
            terms = "" if reward_scale == "prob" else (
                f"; on the reward's {reward_scale} scale fluency {parts[f'fluency_{reward_scale}']:.3f}, "
                f"alignment {parts[f'alignment_{reward_scale}']:.3f}")
            log(f"ppo: step {step + 1}/{steps} reward {entry['reward']:.3f} (probabilities: fluency "
                f"{parts['fluency']:.3f}, alignment {parts['alignment']:.3f}; length penalty "
                f"{parts['length_penalty']:.3f}{terms})")
    (folder / "ppo_history.json").write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
    first = history[: max(1, len(history) // 10)]
    last = history[-max(1, len(history) // 10):]
    mean = lambda rows, k: round(float(np.mean([r[k] for r in rows])), 4) if rows else None  # noqa: E731
    summary: dict[str, Any] = {"steps": len(history), "resumed_from_step": start, "reward_scale": reward_scale}
    # the reward beside what it is made of: mean probabilities of both discriminators and the length penalty
    for key in ("reward", "alignment", "fluency", "length_penalty"):
        summary[f"{key}_first_tenth"], summary[f"{key}_last_tenth"] = mean(first, key), mean(last, key)
    return summary
