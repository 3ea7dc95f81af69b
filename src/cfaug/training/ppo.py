"""PPO for an encoder-decoder policy (e.g. T5) with one scalar reward per generated sequence.

Proximal Policy Optimization (Schulman et al., 2017) in the form used for RLHF (Ouyang et al., 2022):

* a rollout is a source sequence, a sampled response and a score from an outside reward function;
* every response token earns ``-kl_coef * (log p_policy - log p_ref)``, a per-token estimate of the KL
  divergence from a frozen reference model, and the last real token also earns the (scaled, clipped) score;
* a value head on the decoder's last hidden state gives per-token values; GAE turns rewards and values into
  advantages and returns;
* a few epochs over shuffled minibatches minimise the clipped policy loss plus ``vf_coef`` times the clipped
  value loss.

>>> trainer = Seq2SeqPPO(policy, PPOConfig(), total_steps=200)  # policy: a T5ForConditionalGeneration  # doctest: +SKIP
>>> responses = trainer.generate(batch["input_ids"], batch["attention_mask"])       # doctest: +SKIP
>>> stats = trainer.step(batch["input_ids"], batch["attention_mask"], responses, scores)  # doctest: +SKIP

Responses hold the decoder tokens without the decoder start token. A response ends at its first EOS
(which counts as a real token); everything after it is padding and masked out; a response without EOS
fills the whole width. The policy is kept in eval mode (dropout off), so the old and new log-probabilities
of the first minibatch agree and the update is deterministic given the seed.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass
class PPOConfig:
    """Hyper-parameters of :class:`Seq2SeqPPO` (defaults follow common RLHF practice)."""

    lr: float = 1.41e-5            #: Adam learning rate, linearly decayed to 0 over ``total_steps``
    kl_coef: float = 0.01          #: per-token penalty ``-kl_coef * (logp_policy - logp_ref)``
    gamma: float = 0.99            #: discount
    lam: float = 0.95              #: GAE lambda
    clip_range: float = 0.2        #: policy ratio clip
    clip_range_value: float = 0.2  #: value clip (around the rollout's values)
    vf_coef: float = 0.1           #: weight of the value loss
    ppo_epochs: int = 4            #: optimisation epochs per batch of rollouts
    minibatch_size: int = 16
    reward_clip: float = 5.0       #: scores clipped to [-reward_clip, reward_clip] after scaling
    reward_scaling: bool = True    #: divide scores by the running std of all scores seen so far
    whiten_advantages: bool = True
    max_grad_norm: float = 1.0
    max_new_tokens: int = 40
    top_k: int = 0                 #: rollout sampling; 0 = no top-k filtering
    top_p: float = 1.0
    temperature: float = 1.0       #: also divides the logits when log-probabilities are computed


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float,
        lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation on ``[B, T]`` tensors; ``mask`` is 1 for real tokens.

    ``delta_t = r_t + gamma * V_{t+1} - V_t`` and ``A_t = delta_t + gamma * lam * A_{t+1}``, where a masked
    next position ends the episode (its value and advantage count as 0). Returns ``(advantages, returns)``
    with ``returns = advantages + values``, both 0 at padding.
    """
    mask = mask.to(values.dtype)
    advantages = torch.zeros_like(values)
    running = torch.zeros_like(values[:, 0])
    for t in reversed(range(values.size(1))):
        last = t + 1 == values.size(1)
        nxt = torch.zeros_like(running) if last else mask[:, t + 1]   # 0 where the episode ends at t
        next_value = torch.zeros_like(running) if last else values[:, t + 1] * nxt
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running * nxt) * mask[:, t]
        advantages[:, t] = running
    return advantages, (advantages + values) * mask


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over the positions where ``mask`` is 1."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


def whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``x`` shifted and scaled to mean 0 and (population) std 1 over the masked positions; padding is 0."""
    mean = masked_mean(x, mask)
    var = masked_mean((x - mean) ** 2, mask)
    return (x - mean) * torch.rsqrt(var + eps) * mask


def response_mask(responses: torch.Tensor, eos_token_id: int) -> torch.Tensor:
    """1 for every token up to and including the first EOS of each row, 0 after it (float ``[B, T]``)."""
    is_eos = (responses == eos_token_id).long()
    eos_before = torch.cumsum(is_eos, dim=1) - is_eos   # EOS strictly before position t
    return (eos_before == 0).float()


def token_rewards(scores: torch.Tensor, logprobs: torch.Tensor, ref_logprobs: torch.Tensor,
                  mask: torch.Tensor, kl_coef: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token rewards ``-kl_coef * (logprobs - ref_logprobs)`` plus each row's score at its last real
    token; returns ``(rewards, kl)``, both ``[B, T]`` and 0 at padding (``kl`` is the per-token estimate)."""
    kl = (logprobs - ref_logprobs) * mask
    rewards = -kl_coef * kl
    last = (mask.sum(dim=1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.size(0), device=rewards.device), last] += scores.to(rewards.dtype)
    return rewards * mask, kl


class RunningMoments:
    """Running mean and population variance of a stream of scalars (Chan et al.'s parallel update)."""

    def __init__(self) -> None:
        self.mean, self.var, self.count = 0.0, 0.0, 0

    def update(self, xs: torch.Tensor) -> None:
        """Fold a batch of values into the running mean and variance."""
        xs = torch.as_tensor(xs, dtype=torch.float64).flatten()
        n = xs.numel()
        if n == 0:
            return
        b_mean, b_var = xs.mean().item(), xs.var(unbiased=False).item()
        total = self.count + n
        delta = b_mean - self.mean
        m2 = self.var * self.count + b_var * n + delta ** 2 * self.count * n / total
        self.mean, self.var, self.count = self.mean + delta * n / total, m2 / total, total

    @property
    def std(self) -> float:
        """Population standard deviation of everything seen so far (``numpy.std`` with ``ddof=0``)."""
        return math.sqrt(self.var)

    def state_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "var": self.var, "count": self.count}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.mean, self.var, self.count = float(state["mean"]), float(state["var"]), int(state["count"])


class Seq2SeqPPO:
    """PPO trainer for a Hugging Face encoder-decoder ``policy``; see the module docstring.

    ``ref_policy`` defaults to a frozen copy of ``policy`` as given. It is not part of :meth:`state_dict`:
    to resume, build the trainer from the same initial model, then call :meth:`load_state_dict`.
    """

    def __init__(self, policy: Any, config: PPOConfig, *, total_steps: int, ref_policy: Any = None,
                 device: str | torch.device = "cpu", seed: int = 0) -> None:
        self.config, self.seed, self.device = config, seed, torch.device(device)
        self.policy = policy.to(self.device).eval()
        self.ref_policy = (ref_policy if ref_policy is not None else copy.deepcopy(policy)).to(self.device).eval()
        self.ref_policy.requires_grad_(False)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.value_head = torch.nn.Linear(policy.config.d_model, 1).to(self.device)
        self.params = [p for p in self.policy.parameters() if p.requires_grad] + list(self.value_head.parameters())
        self.optimizer = torch.optim.Adam(self.params, lr=config.lr)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: max(0.0, 1.0 - s / max(1, total_steps)))
        self.score_moments = RunningMoments()
        self.generator = torch.Generator().manual_seed(seed)  # minibatch shuffling
        self.step_count = self.generate_count = 0
        gen = policy.generation_config
        self.eos_token_id = int(gen.eos_token_id if gen.eos_token_id is not None else policy.config.eos_token_id)
        self.pad_token_id = int(gen.pad_token_id if gen.pad_token_id is not None else policy.config.pad_token_id)
        self.start_token_id = int(policy.config.decoder_start_token_id)

    def generate(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.LongTensor:
        """Sample one response per row: decoder tokens without the start token, padded after the first EOS.

        Only the sampling settings of :class:`PPOConfig` apply (not the model's own generation config).
        Sampling is seeded by the trainer's seed and the number of earlier calls, so it is reproducible
        and survives a resume; the global torch random state is left untouched.
        """
        from transformers import GenerationConfig

        c = self.config
        gen_config = GenerationConfig(
            do_sample=True, num_beams=1, min_new_tokens=1, max_new_tokens=c.max_new_tokens, top_k=c.top_k,
            top_p=c.top_p, temperature=c.temperature, eos_token_id=self.eos_token_id,
            pad_token_id=self.pad_token_id, decoder_start_token_id=self.start_token_id)
        cuda = list(range(torch.cuda.device_count())) if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=cuda), torch.no_grad():
            torch.manual_seed(self.seed * 1_000_003 + self.generate_count)
            out = self.policy.generate(input_ids=input_ids.to(self.device),
                                       attention_mask=attention_mask.to(self.device), generation_config=gen_config)
        self.generate_count += 1
        responses = out[:, 1:]
        return responses.masked_fill(response_mask(responses, self.eos_token_id) == 0, self.pad_token_id)

    def logprobs_and_values(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                            responses: torch.Tensor, mask: torch.Tensor,
                            with_values: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Log-probabilities ``[B, T]`` of ``responses`` under ``model`` (logits divided by the sampling
        temperature) and, when asked, the value head's per-token values ``[B, T]``."""
        start = torch.full_like(responses[:, :1], self.start_token_id)
        decoder_input_ids = torch.cat([start, responses[:, :-1]], dim=1)
        out = model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                    decoder_attention_mask=mask.long(), output_hidden_states=with_values)
        logp = F.log_softmax(out.logits.float() / self.config.temperature, dim=-1)
        logp = logp.gather(-1, responses.unsqueeze(-1)).squeeze(-1)
        values = None
        if with_values:
            hidden = out.decoder_hidden_states[-1].to(self.value_head.weight.dtype)
            values = self.value_head(hidden).squeeze(-1).float()
        return logp, values

    def step(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, responses: torch.Tensor,
             scores: torch.Tensor) -> dict[str, float]:
        """One PPO update from a batch of rollouts (one ``scores`` value per response).

        Returns ``score`` (mean scaled, clipped score), ``raw_score``, ``kl`` (mean per-sequence sum of
        ``logp - logp_ref`` before the update), ``policy_loss``, ``value_loss``, ``clipfrac`` and
        ``approx_kl`` (means over minibatches), ``lr`` (the rate this step used) and ``response_length``.
        """
        c, dev = self.config, self.device
        input_ids, attention_mask, responses = input_ids.to(dev), attention_mask.to(dev), responses.to(dev)
        raw = torch.as_tensor(scores, dtype=torch.float32).flatten().to(dev)
        mask = response_mask(responses, self.eos_token_id)
        width = int(mask.sum(dim=1).max().item())
        responses, mask = responses[:, :width], mask[:, :width]
        scaled = raw
        if c.reward_scaling:
            self.score_moments.update(raw.cpu())
            std = self.score_moments.std
            scaled = raw / std if self.score_moments.count > 1 and std > 1e-8 else raw
        scaled = scaled.clamp(-c.reward_clip, c.reward_clip)

        with torch.no_grad():
            old_logp, old_values = self.logprobs_and_values(self.policy, input_ids, attention_mask, responses, mask)
            ref_logp, _ = self.logprobs_and_values(self.ref_policy, input_ids, attention_mask, responses, mask,
                                                   with_values=False)
            rewards, kl = token_rewards(scaled, old_logp, ref_logp, mask, c.kl_coef)
            advantages, returns = gae(rewards, old_values, mask, c.gamma, c.lam)
            if c.whiten_advantages:
                advantages = whiten(advantages, mask)

        lr = self.optimizer.param_groups[0]["lr"]
        logs: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "clipfrac": [], "approx_kl": []}
        n = responses.size(0)
        for _ in range(c.ppo_epochs):
            order = torch.randperm(n, generator=self.generator).to(dev)
            for i in range(0, n, c.minibatch_size):
                mb = order[i: i + c.minibatch_size]
                m = mask[mb]
                logp, values = self.logprobs_and_values(self.policy, input_ids[mb], attention_mask[mb],
                                                        responses[mb], m)
                ratio = torch.exp(logp - old_logp[mb])
                adv = advantages[mb]
                pg_plain, pg_clip = -adv * ratio, -adv * ratio.clamp(1 - c.clip_range, 1 + c.clip_range)
                policy_loss = masked_mean(torch.max(pg_plain, pg_clip), m)
                v_old = old_values[mb]
                v_clip = v_old + (values - v_old).clamp(-c.clip_range_value, c.clip_range_value)
                value_loss = 0.5 * masked_mean(torch.max((values - returns[mb]) ** 2,
                                                         (v_clip - returns[mb]) ** 2), m)
                self.optimizer.zero_grad()
                (policy_loss + c.vf_coef * value_loss).backward()
                torch.nn.utils.clip_grad_norm_(self.params, c.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    logs["policy_loss"].append(policy_loss.item())
                    logs["value_loss"].append(value_loss.item())
                    logs["clipfrac"].append(masked_mean((pg_clip > pg_plain).float(), m).item())
                    logs["approx_kl"].append(masked_mean(0.5 * (logp - old_logp[mb]) ** 2, m).item())
        self.scheduler.step()
        self.step_count += 1
        stats = {k: sum(v) / len(v) for k, v in logs.items()}
        stats.update(score=scaled.mean().item(), raw_score=raw.mean().item(), kl=kl.sum(dim=1).mean().item(),
                     lr=lr, response_length=mask.sum(dim=1).mean().item())
        return stats

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: policy, value head, optimizer, scheduler, score statistics, random
        states and counters (the reference model is not included; see the class docstring)."""
        return {"policy": self.policy.state_dict(), "value_head": self.value_head.state_dict(),
                "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "score_moments": self.score_moments.state_dict(), "generator": self.generator.get_state(),
                "step_count": self.step_count, "generate_count": self.generate_count,
                "config": asdict(self.config)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` into this trainer (built with the same model class and config)."""
        self.policy.load_state_dict(state["policy"])
        self.value_head.load_state_dict(state["value_head"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.score_moments.load_state_dict(state["score_moments"])
        self.generator.set_state(state["generator"])
        self.step_count, self.generate_count = int(state["step_count"]), int(state["generate_count"])
