"""The protocol every text classifier follows, the registry that names them, and saving / loading.

A classifier is trained with :meth:`TextClassifier.fit` on training inputs and labels, choosing its
hyper-parameters (or epoch) on a dev set -- or, without one, on a seeded 10% of the training rows held out
for the purpose -- and gives label probabilities with :meth:`TextClassifier.predict_proba` (columns in the
order of ``labels``). :meth:`TextClassifier.save` writes ``classifier.json`` (name, config, labels) and the
weights into a folder; :func:`load_classifier` rebuilds the classifier from it.

Built-in classifiers register themselves when :mod:`cfaug.classifiers` is imported: ``tfidf-svm`` and
``tfidf-logreg`` (:mod:`.tfidf`), ``bilstm`` (:mod:`.bilstm`), ``cnn`` (:mod:`.cnn`), ``transformer``
(:mod:`.transformer`). :class:`TorchTextClassifier` is what the PyTorch ones add (ids, embedding layer,
differentiable logits) for gradient-based attribution; :class:`WordTorchClassifier` is the shared
word-level training of the models trained from scratch (BiLSTM, CNN).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cfaug.config import ConfigError, build_config, config_dict
from cfaug.data.inputs import JudgeInput
from cfaug.registry import Registry

#: the file :meth:`TextClassifier.save` writes beside the weights
MANIFEST = "classifier.json"
#: what ``fit`` reports under ``"dev"`` when it held out part of the training data
HELD_OUT = "held-out 10% of train"


class TextClassifier:
    """Base class: subclasses set ``name`` and ``Config`` and implement ``fit``, ``predict_proba``,
    ``_save_weights`` and ``_load_weights``."""

    name: ClassVar[str] = "classifier.v0"
    Config: ClassVar[type] = type("Config", (), {})
    labels: tuple[str, ...] = ()  #: column order of :meth:`predict_proba`, set by ``fit`` / load

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        self.config = config if config is not None else self.Config()
        self.seed = seed
        self.labels = ()

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str],
            dev_inputs: Sequence[JudgeInput] | None = None, dev_labels: Sequence[str] | None = None) -> dict[str, Any]:
        """Train; return what was chosen on the dev set (hyper-parameters, epoch, dev accuracy). Without a
        dev set a seeded 10% of the training rows is held out for the choice (see :func:`split_dev`)."""
        raise NotImplementedError

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        """Label probabilities, shape ``(len(inputs), len(labels))``; rows sum to 1."""
        raise NotImplementedError

    def predict(self, inputs: Sequence[JudgeInput]) -> list[str]:
        """The most probable label of each input."""
        probs = self.predict_proba(inputs)
        return [self.labels[i] for i in probs.argmax(axis=1)] if len(inputs) else []

    def save(self, folder: str | Path) -> None:
        """Write ``classifier.json`` (``name``, ``config``, ``labels``, ``seed``...) and the weight files."""
        if not self.labels:
            raise RuntimeError(f"{self.name}: save called before fit")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        extra = self._save_weights(folder)
        manifest = {"name": self.name, "config": config_dict(self.config), "labels": list(self.labels),
                    "seed": self.seed, **extra}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

    def describe(self) -> dict[str, Any]:
        return {"classifier": self.name, **config_dict(self.config)}

    # -- what subclasses implement for save / load ------------------------------------------------------
    def _save_weights(self, folder: Path) -> dict[str, Any]:
        """Write the weight files into ``folder``; return extra entries for ``classifier.json``."""
        raise NotImplementedError

    def _load_weights(self, folder: Path, manifest: dict[str, Any]) -> None:
        """Read what :meth:`_save_weights` wrote (``labels`` is already set)."""
        raise NotImplementedError

    @classmethod
    def _config_from_manifest(cls, folder: Path, manifest: dict[str, Any]) -> Any:
        return build_config(cls.Config, dict(manifest.get("config") or {}), owner=cls.name)


CLASSIFIERS: Registry[type[TextClassifier]] = Registry("downstream classifier")


def _register_builtins() -> None:
    import cfaug.classifiers.bilstm  # noqa: F401  (registers)
    import cfaug.classifiers.cnn  # noqa: F401
    import cfaug.classifiers.tfidf  # noqa: F401
    import cfaug.classifiers.transformer  # noqa: F401


def build_classifier(name: str, params: Mapping[str, Any] | None = None, seed: int = 0) -> TextClassifier:
    """A registered classifier by name with ``params`` (strings are converted to the field types)."""
    _register_builtins()
    cls = CLASSIFIERS.get(name)
    return cls(build_config(cls.Config, dict(params or {}), owner=cls.name), seed=seed)  # type: ignore[arg-type]


def load_classifier(folder: str | Path) -> TextClassifier:
    """The classifier :meth:`TextClassifier.save` wrote to ``folder``. Only load folders you trust (the
    TF-IDF models are pickles)."""
    _register_builtins()
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{folder}: no {MANIFEST} (not a folder written by TextClassifier.save)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        name, labels = manifest["name"], manifest["labels"]
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path}: unreadable classifier manifest ({e})") from None
    cls = CLASSIFIERS.get(name)
    obj = cls(cls._config_from_manifest(folder, manifest), seed=int(manifest.get("seed", 0)))
    obj.labels = tuple(str(x) for x in labels)
    obj._load_weights(folder, manifest)
    return obj


def need_file(folder: Path, filename: str) -> Path:
    """``folder / filename``, or a :class:`ConfigError` naming the folder when it is missing."""
    path = folder / filename
    if not path.exists():
        raise ConfigError(f"{folder}: classifier weights {filename!r} are missing")
    return path


def accuracy(predicted: Sequence[str], gold: Sequence[str]) -> float:
    if len(predicted) != len(gold):
        raise ValueError("predictions and gold labels differ in length")
    return sum(p == g for p, g in zip(predicted, gold)) / len(gold) if gold else float("nan")


def split_dev(inputs: Sequence[JudgeInput], labels: Sequence[str], dev_inputs: Sequence[JudgeInput] | None,
              dev_labels: Sequence[str] | None, seed: int
              ) -> tuple[list[JudgeInput], list[str], list[JudgeInput], list[str], dict[str, Any]]:
    """(train inputs, train labels, dev inputs, dev labels, facts).

    With a non-empty dev set the data pass through and ``facts`` is empty. Without one, a seeded 10% of
    each label's training rows is held out (at least one per label that has two or more rows, never a
    label's last row) and ``facts`` says ``{"dev": "held-out 10% of train", "dev_rows": n}``. When no row
    can be held out (one row per label) the training data double as dev data and ``facts`` says so.
    """
    if len(inputs) != len(labels):
        raise ValueError("inputs and labels differ in length")
    if dev_inputs is not None and len(dev_inputs) > 0:
        if dev_labels is None or len(dev_labels) != len(dev_inputs):
            raise ValueError("dev inputs and dev labels differ in length")
        return list(inputs), list(labels), list(dev_inputs), list(dev_labels), {}
    rng = np.random.default_rng(seed)
    rows: dict[str, list[int]] = {}
    for i, y in enumerate(labels):
        rows.setdefault(y, []).append(i)
    held: set[int] = set()
    for y in sorted(rows):
        idx = rows[y]
        k = min(len(idx) - 1, max(1, int(0.1 * len(idx) + 0.5)))
        if k > 0:
            held.update(int(i) for i in rng.permutation(idx)[:k])
    if not held:
        return (list(inputs), list(labels), list(inputs), list(labels),
                {"dev": "training data (too few rows to hold any out)"})
    train = [i for i in range(len(labels)) if i not in held]
    dev = sorted(held)
    return ([inputs[i] for i in train], [labels[i] for i in train], [inputs[i] for i in dev],
            [labels[i] for i in dev], {"dev": HELD_OUT, "dev_rows": len(dev)})


class TorchTextClassifier(TextClassifier):
    """A PyTorch classifier that exposes what gradient-based attribution (e.g. Captum's
    ``LayerIntegratedGradients`` over :attr:`embedding`) needs. A subclass may add ``baseline_ids(ids)``,
    its own Integrated Gradients baseline (the transformer keeps its special tokens and pads the rest);
    without it the baseline is the unknown word at every position that is not padding."""

    pad_id: int = 0
    #: ``forward(ids: LongTensor[B, T]) -> logits[B, n_labels]``; PAD positions are ignored
    net: Any = None

    @property
    def embedding(self) -> Any:
        """The ``nn.Embedding`` layer the ids go through."""
        raise NotImplementedError

    def ids_and_words(self, text: str) -> tuple[list[int], list[str]]:
        """The ids the model reads for ``text`` (after truncation) and, position by position, the
        lower-cased word each id stands for (lists of equal length)."""
        raise NotImplementedError

    def logits(self, ids: Any) -> Any:
        """``net`` in eval mode on its device (no ``inference_mode``: gradients flow)."""
        if self.net is None:
            raise RuntimeError(f"{self.name}: logits called before fit")
        self.net.eval()
        return self.net(ids.to(next(self.net.parameters()).device))


UNK = 1  #: id of out-of-vocabulary words in :class:`WordTorchClassifier` (PAD is 0)


class WordTorchClassifier(TorchTextClassifier):
    """Word-level PyTorch classifiers trained from scratch (no pretrained embeddings, so they run offline).

    Tokens: :func:`cfaug.nlp.tokens.tokenize` (NLI pairs are joined with a separator token); the
    vocabulary is the training set's words seen at least ``min_count`` times (at most ``max_vocab``); texts
    are cut to ``max_tokens``. Training uses Adam with batches in a seeded order and keeps the epoch with
    the best dev accuracy (ties: the lower dev log-loss). Subclasses build the network in
    :meth:`_build_net`; its embedding layer is ``net.emb``. Config fields used here: ``epochs``,
    ``batch_size``, ``learning_rate``, ``max_tokens``, ``max_vocab``, ``min_count``, ``device``.
    """

    bucket_batches: ClassVar[bool] = False  #: batch training rows of similar length (see _train_order)

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.vocab: dict[str, int] = {}
        self.net = None

    def _build_net(self, vocab_size: int, n_labels: int) -> Any:
        raise NotImplementedError

    @property
    def embedding(self) -> Any:
        if self.net is None:
            raise RuntimeError(f"{self.name}: the network exists only after fit or load")
        return self.net.emb

    def ids_and_words(self, text: str) -> tuple[list[int], list[str]]:
        """Word ids (unknown words: 1) and the words; a text without tokens reads as one unknown word ""."""
        from cfaug.data.inputs import as_text
        from cfaug.nlp.tokens import tokenize

        words = tokenize(as_text(text))[: self.config.max_tokens]
        if not words:
            return [UNK], [""]
        return [self.vocab.get(w, UNK) for w in words], words

    def _encode(self, inputs: Sequence[JudgeInput]) -> list[list[int]]:
        return [self.ids_and_words(x)[0] for x in inputs]  # type: ignore[arg-type]

    def _batches(self, seqs: list[list[int]], order: np.ndarray, size: int) -> Iterator[tuple[np.ndarray, Any]]:
        import torch

        for i in range(0, len(order), size):
            idx = order[i: i + size]
            longest = max(len(seqs[j]) for j in idx)
            arr = np.full((len(idx), longest), self.pad_id, dtype=np.int64)
            for r, j in enumerate(idx):
                arr[r, : len(seqs[j])] = seqs[j]
            yield idx, torch.from_numpy(arr)

    def _train_order(self, seqs: list[list[int]], rng: np.random.Generator) -> np.ndarray:
        """The order of the training rows in one epoch (cut into batches of ``batch_size``). With
        ``bucket_batches`` rows of similar length share a batch (less padding) and the batches come in a
        random order; otherwise a plain permutation."""
        if not self.bucket_batches:
            return rng.permutation(len(seqs))
        size = self.config.batch_size
        noisy = np.array([len(s) for s in seqs], dtype=np.float64) * rng.uniform(0.9, 1.1, len(seqs))
        by_length = np.argsort(noisy, kind="stable")
        batches = [by_length[i: i + size] for i in range(0, len(by_length), size)]
        return np.concatenate([batches[i] for i in rng.permutation(len(batches))])

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str],
            dev_inputs: Sequence[JudgeInput] | None = None, dev_labels: Sequence[str] | None = None) -> dict[str, Any]:
        import torch

        from cfaug.data.inputs import as_text
        from cfaug.device import resolve_device
        from cfaug.nlp.tokens import tokenize

        inputs, labels, dev_inputs, dev_labels, facts = split_dev(inputs, labels, dev_inputs, dev_labels, self.seed)
        c = self.config
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        counts = Counter(t for x in inputs for t in tokenize(as_text(x)))
        words = [w for w, n in counts.most_common(c.max_vocab) if n >= c.min_count]
        self.vocab = {w: i + 2 for i, w in enumerate(words)}
        self.labels = tuple(sorted(set(labels)))
        y = torch.tensor([self.labels.index(lab) for lab in labels])
        seqs = self._encode(inputs)
        device = resolve_device(c.device)
        self.net = self._build_net(len(self.vocab) + 2, len(self.labels)).to(device)
        opt = torch.optim.Adam(self.net.parameters(), lr=c.learning_rate)
        loss_fn = torch.nn.CrossEntropyLoss()
        best: tuple[tuple[float, float], int, dict[str, Any]] = ((-1.0, -np.inf), 0, {})
        gold = np.array([self.labels.index(lab) if lab in self.labels else -1 for lab in dev_labels])
        for epoch in range(1, c.epochs + 1):
            self.net.train()
            for idx, batch in self._batches(seqs, self._train_order(seqs, rng), c.batch_size):
                opt.zero_grad()
                loss = loss_fn(self.net(batch.to(device)), y[idx].to(device))
                loss.backward()
                opt.step()
            probs = self.predict_proba(dev_inputs)
            acc = float(np.mean(probs.argmax(axis=1) == gold))
            known = gold >= 0
            dev_loss = float(-np.mean(np.log(np.maximum(probs[known, gold[known]], 1e-12)))) if known.any() else 0.0
            key = (acc, -dev_loss)  # ties in accuracy (small dev sets) go to the lower dev loss
            if key > best[0]:
                best = (key, epoch, {k: v.detach().clone() for k, v in self.net.state_dict().items()})
        self.net.load_state_dict(best[2])
        self.net.eval()
        return {"epoch": best[1], "dev_accuracy": best[0][0], "dev_loss": round(-best[0][1], 4),
                "vocabulary": len(self.vocab), **facts}

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        import torch

        if self.net is None:
            raise RuntimeError(f"{self.name}: predict_proba called before fit")
        self.net.eval()
        seqs = self._encode(inputs)
        order = np.argsort([len(s) for s in seqs], kind="stable")
        out = np.zeros((len(seqs), len(self.labels)))
        device = next(self.net.parameters()).device
        with torch.inference_mode():
            for idx, batch in self._batches(seqs, order, max(self.config.batch_size, 64)):
                out[idx] = torch.softmax(self.net(batch.to(device)).double(), dim=-1).cpu().numpy()
        return out

    def _save_weights(self, folder: Path) -> dict[str, Any]:
        import torch

        if self.net is None:
            raise RuntimeError(f"{self.name}: save called before fit")
        torch.save({k: v.detach().cpu() for k, v in self.net.state_dict().items()}, folder / "model.pt")
        words = sorted(self.vocab, key=self.vocab.__getitem__)
        (folder / "vocab.json").write_text(json.dumps(words, ensure_ascii=False), encoding="utf-8")
        return {"weights": ["model.pt", "vocab.json"]}

    def _load_weights(self, folder: Path, manifest: dict[str, Any]) -> None:
        import torch

        from cfaug.device import resolve_device

        words = json.loads(need_file(folder, "vocab.json").read_text(encoding="utf-8"))
        state = torch.load(need_file(folder, "model.pt"), map_location="cpu", weights_only=True)
        self.vocab = {w: i + 2 for i, w in enumerate(words)}
        torch.manual_seed(self.seed)
        self.net = self._build_net(len(self.vocab) + 2, len(self.labels))
        self.net.load_state_dict(state)
        self.net.to(resolve_device(self.config.device)).eval()
