"""The parts Dis-AE (:mod:`cfaug.methods.lass.disae`) and the opinion summarizer of the LASS downstream test
share: padding of token ids, the BiMeanVAE-style encoder pass (:func:`mean_pooled`), and an LSTM decoder
conditioned on a latent vector, with batched greedy, beam-search and sampled decoding (:class:`LatentDecoder`).

Decoding never writes padding or the unknown word. A subclass sets ``self.embedding`` (word embeddings,
padding index ``PAD``) and calls :meth:`LatentDecoder.build_decoder`. The decoder's initial state is a
function of the latent ``z`` and every input step is the previous word's embedding with ``z`` beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from cfaug.seq2seq.vocab import BOS, EOS, PAD, UNK


def pad_ids(seqs: Sequence[Sequence[int]]) -> torch.Tensor:
    """A batch of token-id lists, right-padded with ``PAD``."""
    width = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [PAD] * (width - len(s)) for s in seqs], dtype=torch.long)


def mean_pooled(embedding: nn.Embedding, lstm: nn.LSTM, drop: nn.Module, ids: torch.Tensor,
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The bidirectional LSTM's states over a padded batch, their mean over the real tokens, and the mask:
    ``(h, states, mask)``."""
    mask = ids != PAD
    lengths = mask.sum(dim=1).clamp(min=1)
    packed = nn.utils.rnn.pack_padded_sequence(drop(embedding(ids)), lengths.cpu(), batch_first=True,
                                               enforce_sorted=False)
    out, _ = lstm(packed)
    states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
    h = (states * mask.unsqueeze(-1)).sum(dim=1) / lengths.unsqueeze(-1)
    return h, states, mask


class LatentDecoder(nn.Module):
    """Decoding part of an autoencoder (see the module docstring)."""

    embedding: nn.Embedding

    def build_decoder(self, vocab_size: int, embedding_dim: int, hidden_size: int, latent: int,
                      dropout: float) -> None:
        """The decoder's layers: ``latent`` is the size of ``z``."""
        self.bridge = nn.Linear(latent, 2 * hidden_size)  # z -> decoder (h0, c0)
        self.decoder = nn.LSTM(embedding_dim + latent, hidden_size, batch_first=True)
        self.output = nn.Linear(hidden_size, vocab_size)
        self.drop = nn.Dropout(dropout)

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

    @torch.no_grad()
    def generate(self, z: torch.Tensor, max_tokens: int = 70, beam: int = 1, *, temperature: float = 0.0,
                 top_p: float = 1.0, seeds: Sequence[int] | None = None) -> list[list[int]]:
        """Token ids decoded from each latent row of ``z`` (EOS not included), batched: greedy with
        ``beam=1``, else a beam search of that width (hypotheses ranked by log-probability per token).
        ``temperature > 0`` samples instead (``beam`` is then ignored): each word from the distribution at
        that temperature, cut to its nucleus of probability ``top_p``; row ``i`` draws from a random stream
        seeded with ``seeds[i]`` (default ``i``), so a row's text does not depend on the rows beside it."""
        if temperature > 0:
            if seeds is not None and len(seeds) != z.shape[0]:
                raise ValueError(f"got {len(seeds)} seeds for {z.shape[0]} rows")
            return self._sample(z, max_tokens, temperature, top_p, list(seeds) if seeds is not None
                                else list(range(z.shape[0])))
        if beam <= 1:
            return self._greedy(z, max_tokens)
        return self._beam(z, max_tokens, beam)

    def _step(self, z: torch.Tensor, token: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        emb = self.embedding(token).unsqueeze(1)
        out, state = self.decoder(torch.cat([emb, z.unsqueeze(1)], dim=-1), state)
        return self.output(out[:, -1]).log_softmax(dim=-1), state

    def _greedy(self, z: torch.Tensor, max_tokens: int) -> list[list[int]]:
        return self._decode(z, max_tokens, lambda logp, alive: logp.argmax(dim=-1))

    def _sample(self, z: torch.Tensor, max_tokens: int, temperature: float, top_p: float,
                seeds: list[int]) -> list[list[int]]:
        streams = [torch.Generator().manual_seed(int(s)) for s in seeds]

        def pick(logp: torch.Tensor, alive: torch.Tensor) -> torch.Tensor:
            probs = (logp / temperature).softmax(dim=-1)
            sorted_p, order = probs.sort(dim=-1, descending=True)
            cum = sorted_p.cumsum(dim=-1)
            sorted_p = sorted_p.masked_fill(cum - sorted_p >= top_p, 0.0)  # outside the nucleus (the top word stays)
            cum = sorted_p.cumsum(dim=-1)
            # inverse CDF with one uniform draw per row from that row's own stream
            u = torch.tensor([float(torch.rand(1, generator=streams[r])) for r in alive.tolist()],
                             dtype=cum.dtype, device=cum.device).unsqueeze(1) * cum[:, -1:]
            k = torch.searchsorted(cum, u).clamp(max=cum.shape[1] - 1)
            return order.gather(1, k).squeeze(1)

        return self._decode(z, max_tokens, pick)

    def _decode(self, z: torch.Tensor, max_tokens: int,
                pick: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> list[list[int]]:
        """Left-to-right decoding, one word per row and step chosen by ``pick(logp, alive)`` (``alive``: the
        batch rows still decoding, in the order of ``logp``'s rows)."""
        state = self._start(z)
        alive = torch.arange(z.shape[0], device=z.device)  # rows still decoding, in batch order
        token = torch.full((z.shape[0],), BOS, dtype=torch.long, device=z.device)
        out: list[list[int]] = [[] for _ in range(z.shape[0])]
        for _ in range(max_tokens):
            logp, state = self._step(z, token, state)
            logp[:, [PAD, UNK]] = float("-inf")  # never write padding or an unknown word
            token = pick(logp, alive)
            going = token != EOS
            for r, t in zip(alive[going].tolist(), token[going].tolist()):
                out[r].append(t)
            if not bool(going.any()):
                break
            # finished rows leave the batch
            alive, z, token = alive[going], z[going], token[going]
            state = (state[0][:, going], state[1][:, going])
        return out

    def _beam(self, z: torch.Tensor, max_tokens: int, width: int) -> list[list[int]]:
        """Beam search for every row at once: the rows' beams run as one batch of ``rows x width``. At each
        step every live beam proposes its ``width`` best next tokens; per row the candidates are ranked by
        total log-probability, a candidate ending in EOS becomes a finished hypothesis (scored per token)
        and the best ``width`` others live on. A row stops when it has ``width`` finished hypotheses or no
        live beam: its live beams then compete with the finished ones and its beams leave the batch, so a
        step costs only the rows still decoding."""
        rows = z.shape[0]
        zz = z.repeat_interleave(width, dim=0)
        state = self._start(zz)
        seqs: list[list[list[int]]] = [[[] for _ in range(width)] for _ in range(rows)]
        scores = [[0.0] + [float("-inf")] * (width - 1) for _ in range(rows)]  # one live beam to start
        finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(rows)]
        alive = list(range(rows))  # rows still decoding; row alive[i] holds batch rows i*width .. i*width+width-1
        tokens = torch.full((rows * width,), BOS, dtype=torch.long, device=z.device)
        for _ in range(max_tokens):
            logp, state = self._step(zz, tokens, state)
            logp[:, [PAD, UNK]] = float("-inf")  # never write padding or an unknown word
            top = logp.topk(width, dim=-1)
            values, indices = top.values.tolist(), top.indices.tolist()
            parents: list[int] = []
            next_tokens: list[int] = []
            still: list[int] = []
            for i, r in enumerate(alive):
                cands = [(scores[r][b] + lp, seqs[r][b] + [t], b)
                         for b in range(width) if scores[r][b] > float("-inf")
                         for lp, t in zip(values[i * width + b], indices[i * width + b])]
                cands.sort(key=lambda c: -c[0])
                keep: list[tuple[float, list[int], int]] = []
                for score, seq, b in cands:
                    if seq[-1] == EOS:
                        finished[r].append((score / len(seq), seq[:-1]))
                    else:
                        keep.append((score, seq, b))
                    if len(keep) == width:
                        break
                if not keep or len(finished[r]) >= width:
                    finished[r] += [(sc / len(q), q) for sc, q, _ in keep]  # the live beams compete now
                    scores[r], seqs[r] = [], []
                    continue
                still.append(r)
                scores[r] = [k[0] for k in keep] + [float("-inf")] * (width - len(keep))
                seqs[r] = [k[1] for k in keep] + [[] for _ in range(width - len(keep))]
                # empty slots decode a dummy EOS from the row's first beam
                parents += [i * width + k[2] for k in keep] + [i * width] * (width - len(keep))
                next_tokens += [k[1][-1] for k in keep] + [EOS] * (width - len(keep))
            alive = still
            if not alive:
                break
            index = torch.tensor(parents, device=z.device)
            state = (state[0][:, index], state[1][:, index])
            zz = zz[index]
            tokens = torch.tensor(next_tokens, dtype=torch.long, device=z.device)
        out = []
        for r in range(rows):
            pool = finished[r] + [(sc / max(1, len(q)), q) for sc, q in zip(scores[r], seqs[r]) if sc > float("-inf")]
            out.append(max(pool, key=lambda f: f[0])[1] if pool else [])
        return out
