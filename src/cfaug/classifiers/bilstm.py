"""A bidirectional LSTM text classifier in PyTorch, trained from scratch (no pretrained embeddings, so it
runs offline). Tokens, vocabulary, truncation and training are those of
:class:`cfaug.classifiers.base.WordTorchClassifier`. The encoder is a one-layer bidirectional LSTM whose
outputs are max-pooled over time; PAD positions play no part (the backward direction reads each text
reversed within its own length), so a text gets the same logits whatever it is batched with.

The defaults suit ``cfaug downstream``; callers that need a quick model (e.g. inside a generation method)
pass smaller settings (``epochs``, ``hidden_size``, ``max_tokens``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.classifiers.base import CLASSIFIERS, WordTorchClassifier


@dataclass
class BiLSTMConfig:
    embedding_dim: int = 100
    hidden_size: int = 64
    dropout: float = 0.3
    epochs: int = 10
    batch_size: int = 32
    learning_rate: float = 1e-3
    max_tokens: int = 400
    max_vocab: int = 30000
    min_count: int = 1
    device: str | None = None


@CLASSIFIERS.register("bilstm.v1", "BiLSTM with max pooling, trained from scratch; best dev epoch kept")
class BiLSTMClassifier(WordTorchClassifier):
    name = "bilstm.v1"
    Config = BiLSTMConfig

    def _build_net(self, vocab_size: int, n_labels: int) -> Any:
        c = self.config
        return _Net(vocab_size, c.embedding_dim, c.hidden_size, n_labels, c.dropout, self.pad_id)


def _Net(vocab: int, dim: int, hidden: int, n_labels: int, dropout: float, pad: int) -> Any:
    import torch
    from torch import nn

    class Net(nn.Module):
        """Two one-directional LSTMs; the backward one reads each text reversed within its own length, so
        the right padding of a batch never reaches a real position (cheaper than packed sequences on CPU)."""

        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab, dim, padding_idx=pad)
            self.fwd = nn.LSTM(dim, hidden, batch_first=True)
            self.bwd = nn.LSTM(dim, hidden, batch_first=True)
            self.drop = nn.Dropout(dropout)
            self.out = nn.Linear(2 * hidden, n_labels)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            length = (ids != pad).sum(dim=1).clamp(min=1).unsqueeze(1)  # B, 1
            pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)  # 1, T
            real = pos < length
            rev = torch.where(real, length - 1 - pos, pos).unsqueeze(-1)  # its own inverse
            x = self.drop(self.emb(ids))
            hf, _ = self.fwd(x)
            hb, _ = self.bwd(x.gather(1, rev.expand(-1, -1, x.shape[2])))
            h = torch.cat([hf, hb.gather(1, rev.expand(-1, -1, hb.shape[2]))], dim=2)
            h = h.masked_fill(~real.unsqueeze(-1), float("-inf"))
            return self.out(self.drop(h.max(dim=1).values))

    return Net()
