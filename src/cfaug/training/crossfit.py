"""Cross-fitting: k models, each trained without one fold of the data, so that every item is judged by a
model that never saw it. A model trained on a text is surer of that text than of new ones, so a method
that judged its own training texts with it would find fewer causal terms and pass flips too easily.

- A record's fold depends only on a key (its id by default, :func:`fold_of`), so the model that judges an
  item is the same whatever the order, batching or engine of the run.
- **A fold missing a label** (one policy for every method): every fold's training part must hold every
  label of the data (labels that every fold is trained on anyway, such as a shared background sample,
  count). :func:`choose_folds` takes the most folds, at most ``wanted`` and at most half the rows, for which
  that holds, and falls back to fewer: at worst one model trained on every row, which then judges its own
  training texts. Fewer folds than the data allows are never quiet: :attr:`FoldModels.note` says why, and
  the method logs it as a warning (with its own remedies) and keeps it in its facts.
- The fold models are saved one file each as they finish (``<prefix><f>.pkl``), so a killed training
  resumes with the next fold, and loaded back in fold order.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

from cfaug.training.store import load_pickle

#: maps an item's key (a record id) to its fold among ``k``
FoldOf = Callable[[str, int], int]


def fold_of(record_id: str, k: int) -> int:
    """The fold (0..k-1) of a record id."""
    return int.from_bytes(hashlib.sha256(record_id.encode("utf-8", "surrogatepass")).digest()[:4], "little") % k


def choose_folds(keys: Sequence[str], labels: Sequence[Hashable], wanted: int, *,
                 always: Iterable[Hashable] = (), fold: FoldOf = fold_of) -> int:
    """The number of folds to cross-fit ``keys`` (with their ``labels``) in: the most, at most ``wanted``
    and at most half the rows, such that every fold's training part (the rows of the other folds, plus the
    labels in ``always`` that every fold is trained on anyway) holds every label; 1 when none does."""
    every = set(labels) | set(always)
    extra = set(always)
    for k in range(min(wanted, max(1, len(keys) // 2)), 1, -1):
        folds = [fold(key, k) for key in keys]
        if all({y for y, f in zip(labels, folds) if f != held_out} | extra == every for held_out in range(k)):
            return k
    return 1


def training_part(keys: Sequence[str], k: int, held_out: int, fold: FoldOf = fold_of) -> list[int]:
    """The positions of the rows fold ``held_out``'s model is trained on: every row when ``k`` is 1."""
    return [n for n, key in enumerate(keys) if k == 1 or fold(key, k) != held_out]


class FoldModels:
    """The ``k`` fold models of a cross-fitted judge; :meth:`groups` routes each item to the model that was
    not trained on it."""

    def __init__(self, models: Sequence[Any], fold: FoldOf = fold_of, note: str = "") -> None:
        self.models = list(models)
        self.fold = fold
        self.note = note  #: how the number of folds was chosen, when it is fewer than asked for

    @property
    def k(self) -> int:
        return len(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __getitem__(self, f: int) -> Any:
        return self.models[f]

    def model_for(self, key: str) -> Any:
        """The model that was not trained on the row with ``key``."""
        return self.models[self.fold(key, self.k) if self.k > 1 else 0]

    def groups(self, keys: Sequence[str]) -> list[tuple[Any, list[int]]]:
        """(model, positions of the items it judges) for each fold that has items, in fold order."""
        by_fold: dict[int, list[int]] = {}
        for n, key in enumerate(keys):
            by_fold.setdefault(self.fold(key, self.k) if self.k > 1 else 0, []).append(n)
        return [(self.models[f], by_fold[f]) for f in sorted(by_fold)]

    @classmethod
    def fit(cls, keys: Sequence[str], labels: Sequence[Hashable], wanted: int,
            train: Callable[[list[int]], Any], folder: str | os.PathLike[str] | None, prefix: str, *,
            always: Iterable[Hashable] = (), fold: FoldOf = fold_of,
            bar: Callable[[int], Any] | None = None) -> FoldModels:
        """Cross-fit: choose the number of folds (:func:`choose_folds`), and for each fold call
        ``train(positions of its training rows)`` and save what it returns as ``<folder>/<prefix><f>.pkl``
        (``folder`` None: kept in memory only). A fold whose file exists (a training killed after it) is
        loaded instead of trained again.
        ``bar(k)``: a progress bar over the folds (``update``, ``close``)."""
        always = set(always)
        k = choose_folds(keys, labels, wanted, always=always, fold=fold)
        possible = min(wanted, max(1, len(keys) // 2))
        note = ""
        if k < possible:
            counts = Counter(str(y) for y in labels)
            held = ", ".join(f"{n} {y!r}" for y, n in counts.most_common())
            note = (f"cross-fitted in {k} folds instead of {possible}: with more, the training part of some fold "
                    f"would lack a label (the {len(keys)} training rows hold {held})")
            if k == 1:
                note += "; one model trained on every row judges those same rows, without cross-fitting"
        models = []
        progress = bar(k) if bar is not None else None
        for f in range(k):
            path = Path(folder) / f"{prefix}{f}.pkl" if folder is not None else None
            if path is not None and path.exists():
                models.append(load_pickle(path))
            else:
                model = train(training_part(keys, k, f, fold))
                if path is not None:
                    save_pickle(path, model)
                models.append(model)
            if progress is not None:
                progress.update(1)
        if progress is not None:
            progress.close()
        return cls(models, fold, note)

    @classmethod
    def load(cls, folder: str | os.PathLike[str], prefix: str, fold: FoldOf = fold_of) -> FoldModels:
        """The fold models saved under ``<folder>/<prefix><f>.pkl``, in fold order (empty when none)."""
        paths = sorted(Path(folder).glob(f"{prefix}*.pkl"), key=lambda p: int(p.stem[len(prefix):]))
        return cls([load_pickle(p) for p in paths], fold)


def save_pickle(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` to ``path`` whole or not at all (a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(obj, fh)
    tmp.replace(path)
