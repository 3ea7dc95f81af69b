"""A convolutional text classifier in the style of Kim (2014), trained from scratch in PyTorch.

Word embeddings learnt from the training data (no pretrained vectors, so it runs offline), convolutions
of widths ``widths`` (default 3, 4, 5) with ``filters`` feature maps each, ReLU, max-pooling over time,
dropout and a linear layer. Texts shorter than the widest filter are padded to it. Windows that reach into
the PAD positions of a batch are left out of the pooling, so a text gets the same logits whatever it is
batched with. Tokens, vocabulary, truncation and training are those of
:class:`cfaug.classifiers.base.WordTorchClassifier`.

The defaults train on ~1,700 IMDB reviews (~230 words each) in well under half a minute on one CPU core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.classifiers.base import CLASSIFIERS, WordTorchClassifier


@dataclass
class CNNConfig:
    """``widths``: comma-separated filter widths; ``filters``: feature maps per width."""

    embedding_dim: int = 32
    widths: str = "3,4,5"
    filters: int = 50
    dropout: float = 0.5
    epochs: int = 8
    batch_size: int = 32
    learning_rate: float = 3e-3
    max_tokens: int = 400
    max_vocab: int = 30000
    min_count: int = 2
    device: str | None = None


@CLASSIFIERS.register("cnn.v1", "Kim-2014 CNN (widths 3,4,5, max over time), trained from scratch; best dev epoch kept")
class CNNClassifier(WordTorchClassifier):
    name = "cnn.v1"
    Config = CNNConfig
    bucket_batches = True

    def __init__(self, config: CNNConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        try:
            self.widths = tuple(int(w) for w in str(self.config.widths).split(",") if w.strip())
        except ValueError:
            self.widths = ()
        if not self.widths or min(self.widths) < 1:
            from cfaug.config import ConfigError

            raise ConfigError(f"parameter widths of cnn.v1: expected comma-separated positive integers, "
                              f"got {self.config.widths!r}")

    def _build_net(self, vocab_size: int, n_labels: int) -> Any:
        c = self.config
        return _Net(vocab_size, c.embedding_dim, self.widths, c.filters, n_labels, c.dropout, self.pad_id)


def _Net(vocab: int, dim: int, widths: tuple[int, ...], filters: int, n_labels: int, dropout: float,
         pad: int) -> Any:
    import torch
    from torch import nn

    widest = max(widths)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab, dim, padding_idx=pad)
            self.convs = nn.ModuleList(nn.Conv1d(dim, filters, w) for w in widths)
            self.drop = nn.Dropout(dropout)
            self.out = nn.Linear(filters * len(widths), n_labels)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            x = self.emb(ids)  # B, T, D; PAD embeds to zeros
            if x.shape[1] < widest:  # pad the embeddings (not the ids): the embedding output keeps T positions
                x = nn.functional.pad(x, (0, 0, 0, widest - x.shape[1]))
            # a text of L tokens reads as max(L, widest) positions, the rest is batch padding
            length = (ids != pad).sum(dim=1).clamp(min=widest)
            x = x.transpose(1, 2)
            pooled = []
            for w, conv in zip(widths, self.convs):
                h = torch.relu(conv(x))  # B, F, T - w + 1
                starts = torch.arange(h.shape[2], device=ids.device)
                valid = starts.unsqueeze(0) + w <= length.unsqueeze(1)
                pooled.append(h.masked_fill(~valid.unsqueeze(1), float("-inf")).max(dim=2).values)
            return self.out(self.drop(torch.cat(pooled, dim=1)))

    return Net()
