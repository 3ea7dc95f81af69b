"""The classifiers M of CoBA's voting ensemble (``models``): each entry is a registered classifier, trained
here on the input in the training stage, or a local folder (a classifier saved by cfaug, or a Hugging Face
sequence classifier) whose outputs are read under the task's labels, from its own names or from
``model_labels``. :class:`EnsembleModels` parses those labels, checks every entry from the folders' small
JSON files before any work, trains the registered ones (each saved as it finishes) and loads them all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.tasks import Task
from cfaug.judges.classifier import (check_classifier_folder, folder_label_names, is_generic_label,
                                    load_classifier_by_path)
from cfaug.methods.coba.config import MODEL_LABELS_FLAG, TORCH_DEFAULTS
from cfaug.training.context import FitContext, StageContext


class EnsembleModels:
    """The entries of ``models`` (``names``, in order) and the labels ``model_labels`` gives them."""

    def __init__(self, names: Sequence[str], model_labels: str | None) -> None:
        self.names = list(names)
        self.labels = parse_model_labels(model_labels, self.names)

    def given_labels(self, n: int, folder: Path) -> list[str] | None:
        """The labels ``model_labels`` gives the ``n``-th model (a folder): its own ';'-separated entry, or
        the one shared list when the folder's own output names are LABEL_0-style."""
        shared, per_model = self.labels
        if per_model is not None:
            return per_model[n]
        if shared and any(is_generic_label(x) for x in folder_label_names(folder)):
            return shared
        return None

    def check(self, label_space: Sequence[str]) -> dict[str, list[str]]:
        """Check every entry from the folders' small JSON files alone (no model is loaded): a registered
        classifier or a local classifier folder whose outputs have the task's labels (``label_space``).
        Returns the labels of the models given by folder; a folder that fails raises ModelPathError."""
        from cfaug.classifiers import CLASSIFIERS
        from cfaug.local_models import ModelPathError

        per_model = self.labels[1]
        out: dict[str, list[str]] = {}
        for n, name in enumerate(self.names):
            path = Path(name).expanduser()
            if path.is_dir():
                out[name] = list(check_classifier_folder(path, labels=self.given_labels(n, path),
                                                         label_space=label_space, what="models:",
                                                         flag=MODEL_LABELS_FLAG))
            elif name not in CLASSIFIERS:
                known = ", ".join(sorted(e.name.split(".")[0] for e in CLASSIFIERS.entries()))
                try:
                    check_classifier_folder(name, what="classifier")
                except ModelPathError as exc:
                    raise ConfigError(f"models: {exc} (a classifier trained here is one of: {known})") from None
            elif per_model is not None and per_model[n]:
                raise ConfigError(f"model_labels: entry {n + 1} is for {name}, a classifier trained here on the "
                                  "task's labels; leave it empty")
        return out

    def fit(self, inputs: list[Any], labels: list[str], dev_inputs: list[Any] | None, dev_labels: list[str] | None,
            ctx: FitContext, *, epochs: int, seed: int) -> dict[str, Any]:
        """Train every registered classifier into ``models/<n>`` of the model folder (each saved as it
        finishes, so a killed training resumes); the facts of each entry by name."""
        from cfaug.classifiers import build_classifier

        facts: dict[str, Any] = {}
        bar = ctx.bar(len(self.names), "training the ensemble's classifiers", unit="model")
        for n, name in enumerate(self.names):
            folder = ctx.path(f"models/{n}")
            if Path(name).expanduser().is_dir():
                facts[name] = {"path": str(Path(name).expanduser())}
            elif (folder / "classifier.json").exists():  # finished before an interruption
                facts[name] = {"resumed": True}
            else:
                base = name.split(".")[0]
                params = dict(TORCH_DEFAULTS.get(base, {}))
                if base in TORCH_DEFAULTS:
                    params["epochs"] = epochs
                clf = build_classifier(name, params, seed=seed)
                facts[name] = clf.fit(inputs, labels, dev_inputs, dev_labels)
                folder.mkdir(parents=True, exist_ok=True)
                clf.save(folder)
            bar.update(1)
        bar.close()
        return facts

    def load_by_path(self, n: int, path: Path, task: Task, ctx: StageContext) -> Any:
        """The ``n``-th classifier of M, given by folder, its outputs named by task labels."""
        from cfaug.local_models import ModelPathError

        try:
            return load_classifier_by_path(path, labels=self.given_labels(n, path), label_space=task.label_space,
                                           device=ctx.device, what="models:", flag=MODEL_LABELS_FLAG)
        except ModelPathError as exc:
            raise ConfigError(str(exc)) from None

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """Every classifier of M by name (a registered one under its base name), and the labels of the
        folders whose outputs are read under other names than their own."""
        from cfaug.classifiers import load_classifier

        models: dict[str, Any] = {}
        relabelled: dict[str, list[str]] = {}  #: folders whose outputs are read under other names than their own
        for n, name in enumerate(self.names):
            path = Path(name).expanduser()
            if path.is_dir():
                models[name] = self.load_by_path(n, path, task, ctx)
                if list(models[name].labels) != folder_label_names(path):
                    relabelled[name] = list(models[name].labels)
            else:
                models[name.split(".")[0]] = load_classifier(artifact_dir / "models" / str(n))
        return models, relabelled


def parse_model_labels(spec: str | None, model_names: Sequence[str]
                       ) -> tuple[list[str] | None, list[list[str] | None] | None]:
    """``model_labels`` as (one list shared by the folders with unnamed outputs, or None; one entry per
    model, or None)."""
    if spec is None or not str(spec).strip():
        return None, None
    spec = str(spec)
    if ";" not in spec:
        return [x.strip() for x in spec.split(",") if x.strip()], None
    parts = [[x.strip() for x in part.split(",") if x.strip()] or None for part in spec.split(";")]
    if len(parts) != len(model_names):
        raise ConfigError(f"model_labels: {len(parts)} ';'-separated lists for {len(model_names)} models "
                          f"({', '.join(model_names)}); give one per entry of models, empty for a model whose own "
                          "names serve")
    return None, parts


__all__ = ["EnsembleModels", "parse_model_labels"]
