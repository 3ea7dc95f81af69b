"""A bidirectional LSTM text classifier in PyTorch, trained from scratch (no pretrained embeddings, so it
runs offline). Tokens: :func:`cfaug.judges.similarity.tokenize`; the vocabulary is the training set's
words seen at least ``min_count`` times (at most ``max_vocab``); texts are cut to ``max_tokens``. The
encoder is a one-layer BiLSTM whose outputs are max-pooled over time; training uses Adam and keeps the
epoch with the best dev accuracy. NLI pairs are joined with a separator token.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cfaug.evaluate.downstream.classifiers import CLASSIFIERS, TextClassifier, accuracy
from cfaug.judges.classifier import JudgeInput, as_text
from cfaug.judges.models import torch_device
from cfaug.judges.similarity import tokenize

PAD, UNK = 0, 1


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
class BiLSTMClassifier(TextClassifier):
    name = "bilstm.v1"
    Config = BiLSTMConfig

    def __init__(self, config: BiLSTMConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.vocab: dict[str, int] = {}
        self.labels: tuple[str, ...] = ()
        self.net: Any = None

    def _encode(self, inputs: Sequence[JudgeInput]) -> list[list[int]]:
        out = []
        for x in inputs:
            ids = [self.vocab.get(t, UNK) for t in tokenize(as_text(x))][: self.config.max_tokens]
            out.append(ids or [UNK])
        return out

    def _batches(self, seqs: list[list[int]], order: np.ndarray) -> Any:
        import torch

        for i in range(0, len(order), self.config.batch_size):
            idx = order[i: i + self.config.batch_size]
            longest = max(len(seqs[j]) for j in idx)
            arr = np.full((len(idx), longest), PAD, dtype=np.int64)
            for r, j in enumerate(idx):
                arr[r, : len(seqs[j])] = seqs[j]
            yield idx, torch.from_numpy(arr)

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str], dev_inputs: Sequence[JudgeInput],
            dev_labels: Sequence[str]) -> dict[str, Any]:
        import torch

        c = self.config
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        counts = Counter(t for x in inputs for t in tokenize(as_text(x)))
        words = [w for w, n in counts.most_common(c.max_vocab) if n >= c.min_count]
        self.vocab = {w: i + 2 for i, w in enumerate(words)}
        self.labels = tuple(sorted(set(labels)))
        y = torch.tensor([self.labels.index(lab) for lab in labels])
        seqs = self._encode(inputs)
        device = torch_device(c.device)
        self.net = _Net(len(self.vocab) + 2, c.embedding_dim, c.hidden_size, len(self.labels), c.dropout).to(device)
        opt = torch.optim.Adam(self.net.parameters(), lr=c.learning_rate)
        loss_fn = torch.nn.CrossEntropyLoss()
        best: tuple[float, int, dict[str, Any]] = (-1.0, 0, {})
        for epoch in range(1, c.epochs + 1):
            self.net.train()
            for idx, batch in self._batches(seqs, rng.permutation(len(seqs))):
                opt.zero_grad()
                loss = loss_fn(self.net(batch.to(device)), y[idx].to(device))
                loss.backward()
                opt.step()
            acc = accuracy(self.predict(dev_inputs), dev_labels)
            if acc > best[0]:
                best = (acc, epoch, {k: v.detach().clone() for k, v in self.net.state_dict().items()})
        self.net.load_state_dict(best[2])
        return {"epoch": best[1], "dev_accuracy": best[0], "vocabulary": len(self.vocab)}

    def predict(self, inputs: Sequence[JudgeInput]) -> list[str]:
        import torch

        if self.net is None:
            raise RuntimeError("predict called before fit")
        self.net.eval()
        seqs = self._encode(inputs)
        order = np.argsort([len(s) for s in seqs], kind="stable")
        pred = np.zeros(len(seqs), dtype=np.int64)
        device = next(self.net.parameters()).device
        with torch.inference_mode():
            for idx, batch in self._batches(seqs, order):
                pred[idx] = self.net(batch.to(device)).argmax(dim=1).cpu().numpy()
        return [self.labels[i] for i in pred]


def _Net(vocab: int, dim: int, hidden: int, n_labels: int, dropout: float) -> Any:
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
            self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
            self.drop = nn.Dropout(dropout)
            self.out = nn.Linear(2 * hidden, n_labels)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            h, _ = self.lstm(self.drop(self.emb(ids)))
            h = h.masked_fill((ids == PAD).unsqueeze(-1), float("-inf"))
            return self.out(self.drop(h.max(dim=1).values))

    return Net()
