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
Greedy decoding and, with ``beam > 1``, beam search run over all rows of a batch at once (the paper: beam 4,
70 tokens); both live in :class:`~cfaug.seq2seq.decoding.LatentDecoder`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from cfaug.seq2seq.decoding import LatentDecoder, mean_pooled
from cfaug.seq2seq.vocab import PAD


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


class DisAE(LatentDecoder):
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
        self.build_decoder(c.vocab_size, c.embedding_dim, c.hidden_size, 2 * c.latent, c.dropout)

    # -- encoding -----------------------------------------------------------------------------------
    def encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(z_e, z_c) of a padded batch of token ids (batch x time)."""
        h, states, mask = mean_pooled(self.embedding, self.encoder, self.drop, ids)
        return self.sentiment_head(h, states, mask), self.content_head(h, states, mask)

    def sentiment(self, z_e: torch.Tensor) -> torch.Tensor:
        """z~_e: the label representations weighted by C's distribution over ``z_e``."""
        return self.classifier(z_e).softmax(dim=-1) @ self.label_vectors

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
