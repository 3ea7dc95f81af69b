"""Dis-AE: the disentangling autoencoder of LASS (section 3.2 of the LASS paper), in PyTorch.

Architecture, for a batch of token ids ``x``:

* **Encoder** (BiMeanVAE-style): word embeddings, a bidirectional LSTM, and the mean of its states over
  the real tokens, ``h``. Two attention heads read the states with a query made from ``h``, one for the
  sentiment vector ``z_e`` and one for the content vector ``z_c`` (the paper's "different self-attention
  layers"), each followed by a linear map to ``latent`` dimensions.
* **Sentiment classifier C** over ``M`` classes, applied to sentiment and content vectors alike.
* **Label representations Z_r**: ``M`` learnable vectors; the sentiment vector the decoder sees is
  ``z~_e = softmax(C(z_e)) @ Z_r``, so it carries the sentiment and as little content as possible.
* **Decoder**: an LSTM whose initial state and every input step are conditioned on ``z = [z~_e ; z_c]``.

Training on a pair ``(x_p, x_n)`` (same content, opposite sentiment) minimises, as equation (7)::

    L = L_rec + alpha * (L_e + L_n + L_r) + beta * L_dis + gamma * L_cf

``L_rec``: reconstruction of each text from its own ``[z~_e ; z_c]`` (token cross-entropy); ``L_e``:
C on ``z_e`` gives the text's label; ``L_n``: KL(uniform || C(z_c)), so content vectors carry no
sentiment; ``L_r``: C on each ``Z_r`` row gives its own label; ``L_dis = 2 + cos(z_e^p, z_e^n) -
cos(z_c^p, z_c^n)``; ``L_cf``: each text reconstructed from its own sentiment and the *other* text's
content. ``alpha``, ``beta``, ``gamma`` are annealed from 0 (see :func:`annealed_weights`).

Generation (:meth:`DisAE.generate`) decodes ``[z~_e of one text ; z_c of another]``: the content of a
positive review with the sentiment of a negative one is a negative version of the positive review.
Greedy decoding runs batched; ``beam > 1`` runs a beam search per text (the paper: beam 4, 70 tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from cfaug.methods.lass.vocab import BOS, EOS, PAD


@dataclass
class DisAEConfig:
    """Sizes of Dis-AE. ``classes``: sentiment classes M (2: negative, positive)."""

    vocab_size: int
    embedding_dim: int = 128
    hidden_size: int = 256
    latent: int = 128
    classes: int = 2
    dropout: float = 0.1


@dataclass
class LossWeights:
    """Upper limits of the annealed weights of equation (7) (the paper: 5, 1, 1)."""

    alpha: float = 5.0
    beta: float = 1.0
    gamma: float = 1.0


def annealed_weights(step: int, anneal_steps: int, limits: LossWeights) -> LossWeights:
    """The weights at ``step``: each rises linearly from 0 to its limit over ``anneal_steps`` (as in KL
    annealing), so reconstruction is learnt before the constraints weigh in."""
    f = 1.0 if anneal_steps <= 0 else min(1.0, step / anneal_steps)
    return LossWeights(limits.alpha * f, limits.beta * f, limits.gamma * f)


class _AttentionHead(nn.Module):
    """One attention read of the encoder states, with a query made from their mean."""

    def __init__(self, states: int, latent: int) -> None:
        super().__init__()
        self.query = nn.Linear(states, states)
        self.out = nn.Linear(states, latent)

    def forward(self, h: torch.Tensor, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = torch.einsum("bd,btd->bt", self.query(h), states) / states.shape[-1] ** 0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        return self.out(torch.einsum("bt,btd->bd", scores.softmax(dim=-1), states))


class DisAE(nn.Module):
    """The Dis-AE network; see the module docstring."""

    def __init__(self, config: DisAEConfig) -> None:
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(c.vocab_size, c.embedding_dim, padding_idx=PAD)
        self.encoder = nn.LSTM(c.embedding_dim, c.hidden_size, batch_first=True, bidirectional=True)
        self.sentiment_head = _AttentionHead(2 * c.hidden_size, c.latent)
        self.content_head = _AttentionHead(2 * c.hidden_size, c.latent)
        self.classifier = nn.Linear(c.latent, c.classes)
        self.label_vectors = nn.Parameter(torch.randn(c.classes, c.latent) * 0.1)  # Z_r
        self.bridge = nn.Linear(2 * c.latent, 2 * c.hidden_size)  # z -> decoder (h0, c0)
        self.decoder = nn.LSTM(c.embedding_dim + 2 * c.latent, c.hidden_size, batch_first=True)
        self.output = nn.Linear(c.hidden_size, c.vocab_size)
        self.drop = nn.Dropout(c.dropout)

    # -- encoding -----------------------------------------------------------------------------------
    def encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(z_e, z_c) of a padded batch of token ids (batch x time)."""
        mask = ids != PAD
        lengths = mask.sum(dim=1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.drop(self.embedding(ids)), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, _ = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
        h = (states * mask.unsqueeze(-1)).sum(dim=1) / lengths.unsqueeze(-1)
        return self.sentiment_head(h, states, mask), self.content_head(h, states, mask)

    def sentiment(self, z_e: torch.Tensor) -> torch.Tensor:
        """z~_e: the label representations weighted by C's distribution over ``z_e``."""
        return self.classifier(z_e).softmax(dim=-1) @ self.label_vectors

    # -- decoding -----------------------------------------------------------------------------------
    def _start(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h0, c0 = torch.tanh(self.bridge(z)).chunk(2, dim=-1)
        return h0.unsqueeze(0).contiguous(), c0.unsqueeze(0).contiguous()

    def decode_logits(self, z: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits for ``ids`` (which end with EOS) given latent ``z``: the inputs are BOS
        and ``ids`` without its last position."""
        inputs = torch.cat([torch.full_like(ids[:, :1], BOS), ids[:, :-1]], dim=1)
        emb = self.drop(self.embedding(inputs))
        steps = torch.cat([emb, z.unsqueeze(1).expand(-1, ids.shape[1], -1)], dim=-1)
        out, _ = self.decoder(steps, self._start(z))
        return self.output(self.drop(out))

    def reconstruction(self, z: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Mean token cross-entropy of ``ids`` decoded from ``z`` (padding ignored)."""
        logits = self.decode_logits(z, ids)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1), ignore_index=PAD)

    # -- the loss of equation (7) -------------------------------------------------------------------
    def _side(self, ids: torch.Tensor, label: torch.Tensor) -> dict[str, torch.Tensor]:
        """The terms of one side: its vectors, reconstruction, L_e and L_n."""
        ze, zc = self.encode(ids)
        se = self.sentiment(ze)
        uniform = torch.full((1, self.config.classes), 1.0 / self.config.classes, device=ids.device)
        l_n = F.kl_div(self.classifier(zc).log_softmax(-1), uniform.expand(zc.shape[0], -1), reduction="batchmean")
        return {"ze": ze, "zc": zc, "se": se, "rec": self.reconstruction(torch.cat([se, zc], -1), ids),
                "e": F.cross_entropy(self.classifier(ze), label), "n": l_n}

    def _label_loss(self, device: torch.device) -> torch.Tensor:
        """L_r: each label representation must be classified as its own label."""
        return F.cross_entropy(self.classifier(self.label_vectors), torch.arange(self.config.classes, device=device))

    def losses(self, pos: torch.Tensor, neg: torch.Tensor, pos_label: torch.Tensor,
               neg_label: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every term of equation (7) for a batch of pairs (padded ids of the two sides, and their labels)."""
        p, n = self._side(pos, pos_label), self._side(neg, neg_label)
        cf = (self.reconstruction(torch.cat([p["se"], n["zc"]], -1), pos)
              + self.reconstruction(torch.cat([n["se"], p["zc"]], -1), neg))
        l_e, l_n, l_r = p["e"] + n["e"], p["n"] + n["n"], self._label_loss(pos.device)
        dis = (2 + F.cosine_similarity(p["ze"], n["ze"], dim=-1) - F.cosine_similarity(p["zc"], n["zc"], dim=-1)).mean()
        return {"rec": p["rec"] + n["rec"], "emo": l_e + l_n + l_r, "e": l_e, "n": l_n, "r": l_r, "dis": dis, "cf": cf}

    def corpus_losses(self, ids: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        """The terms of equation (7) that need no pair, for a batch of single labelled texts: reconstruction
        and the sentiment terms L_e + L_n + L_r (used to pretrain on the domain corpus)."""
        side = self._side(ids, labels)
        l_r = self._label_loss(ids.device)
        return {"rec": side["rec"], "emo": side["e"] + side["n"] + l_r, "e": side["e"], "n": side["n"], "r": l_r}

    def loss(self, pos: torch.Tensor, neg: torch.Tensor, pos_label: torch.Tensor, neg_label: torch.Tensor,
             weights: LossWeights) -> tuple[torch.Tensor, dict[str, float]]:
        """Equation (7) with ``weights``, and every term as a float for logging."""
        parts = self.losses(pos, neg, pos_label, neg_label)
        total = parts["rec"] + weights.alpha * parts["emo"] + weights.beta * parts["dis"] + weights.gamma * parts["cf"]
        return total, {k: float(v.detach()) for k, v in parts.items()}

    # -- generation ---------------------------------------------------------------------------------
    @torch.no_grad()
    def transfer(self, content: torch.Tensor, sentiment: torch.Tensor) -> torch.Tensor:
        """The latent ``[z~_e of each sentiment text ; z_c of each content text]`` (two padded id batches of
        equal size)."""
        _, zc = self.encode(content)
        ze, _ = self.encode(sentiment)
        return torch.cat([self.sentiment(ze), zc], dim=-1)

    @torch.no_grad()
    def generate(self, z: torch.Tensor, max_tokens: int = 70, beam: int = 1) -> list[list[int]]:
        """Token ids decoded from each latent row of ``z`` (EOS not included), batched: greedy with
        ``beam=1``, else a beam search of that width (hypotheses ranked by log-probability per token)."""
        if beam <= 1:
            return self._greedy(z, max_tokens)
        return self._beam(z, max_tokens, beam)

    def _step(self, z: torch.Tensor, token: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        emb = self.embedding(token).unsqueeze(1)
        out, state = self.decoder(torch.cat([emb, z.unsqueeze(1)], dim=-1), state)
        return self.output(out[:, -1]).log_softmax(dim=-1), state

    def _greedy(self, z: torch.Tensor, max_tokens: int) -> list[list[int]]:
        state = self._start(z)
        token = torch.full((z.shape[0],), BOS, dtype=torch.long, device=z.device)
        done = torch.zeros(z.shape[0], dtype=torch.bool, device=z.device)
        out: list[list[int]] = [[] for _ in range(z.shape[0])]
        for _ in range(max_tokens):
            logp, state = self._step(z, token, state)
            logp[:, PAD] = float("-inf")
            token = logp.argmax(dim=-1)
            for i in (~done).nonzero().flatten().tolist():
                if int(token[i]) != EOS:
                    out[i].append(int(token[i]))
            done |= token == EOS
            if bool(done.all()):
                break
        return out

    def _beam(self, z: torch.Tensor, max_tokens: int, width: int) -> list[list[int]]:
        """Beam search for every row at once: the rows' beams run as one batch of ``rows x width``. At each
        step every live beam proposes its ``width`` best next tokens; per row the candidates are ranked by
        total log-probability, a candidate ending in EOS becomes a finished hypothesis (scored per token)
        and the best ``width`` others live on. A row stops when it has ``width`` finished hypotheses or no
        live beam; at the end the live beams compete with the finished ones."""
        rows = z.shape[0]
        zz = z.repeat_interleave(width, dim=0)
        state = self._start(zz)
        seqs: list[list[list[int]]] = [[[] for _ in range(width)] for _ in range(rows)]
        scores = [[0.0] + [float("-inf")] * (width - 1) for _ in range(rows)]  # one live beam to start
        finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(rows)]
        done = [False] * rows
        tokens = torch.full((rows * width,), BOS, dtype=torch.long, device=z.device)
        for _ in range(max_tokens):
            logp, state = self._step(zz, tokens, state)
            logp[:, PAD] = float("-inf")
            top = logp.topk(width, dim=-1)
            values, indices = top.values.tolist(), top.indices.tolist()
            parents, next_tokens = [], []
            for r in range(rows):
                keep: list[tuple[float, list[int], int]] = []
                if not done[r]:
                    cands = [(scores[r][b] + lp, seqs[r][b] + [t], b)
                             for b in range(width) if scores[r][b] > float("-inf")
                             for lp, t in zip(values[r * width + b], indices[r * width + b])]
                    cands.sort(key=lambda c: -c[0])
                    for score, seq, b in cands:
                        if seq[-1] == EOS:
                            finished[r].append((score / len(seq), seq[:-1]))
                        else:
                            keep.append((score, seq, b))
                        if len(keep) == width:
                            break
                    if not keep or len(finished[r]) >= width:
                        done[r] = True  # its live beams compete with the finished ones now
                        finished[r] += [(sc / len(q), q) for sc, q, _ in keep]
                        keep = []
                scores[r] = [k[0] for k in keep] + [float("-inf")] * (width - len(keep))
                seqs[r] = [k[1] for k in keep] + [[] for _ in range(width - len(keep))]
                # empty slots (and finished rows) decode a dummy EOS from the row's first beam
                parents += [r * width + k[2] for k in keep] + [r * width] * (width - len(keep))
                next_tokens += [k[1][-1] for k in keep] + [EOS] * (width - len(keep))
            if all(done):
                break
            index = torch.tensor(parents, device=z.device)
            state = (state[0][:, index], state[1][:, index])
            tokens = torch.tensor(next_tokens, dtype=torch.long, device=z.device)
        out = []
        for r in range(rows):
            pool = finished[r] + [(sc / max(1, len(q)), q) for sc, q in zip(scores[r], seqs[r]) if sc > float("-inf")]
            out.append(max(pool, key=lambda f: f[0])[1] if pool else [])
        return out
