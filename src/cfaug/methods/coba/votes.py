"""What decides CoBA's principal and spurious words: the voting ensemble (every classifier of M explained by
every attribution method of ``importance``, :class:`cfaug.importance.Ensemble`) with its vote cache, which
keeps each text's top words so a rerun with other rewrite settings does not explain the texts again; the
label each text is explained for; and the user's extra spurious words (``spurious_words``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError
from cfaug.data.records import WorkItem
from cfaug.methods.coba.config import CoBAConfig


def build_ensemble(models: Mapping[str, Any], importance_names: Sequence[str], c: CoBAConfig, *, seed: int,
                   artifact_dir: Path, model_names: Sequence[str], relabelled: dict[str, list[str]]) -> Any:
    """The ensemble of ``models`` x the attribution methods ``importance_names`` (with their settings in
    ``c``), its votes cached as ``c.vote_cache`` says. A classifier an attribution method cannot explain
    stops the run here, before any item."""
    from cfaug.importance import Ensemble, build_word_importance

    methods = []
    for m in importance_names:
        base = m.split(".")[0]
        params = {"lime": {"samples": c.lime_samples}, "shapley": {"samples": c.shapley_samples},
                  "integrated-gradients": {"steps": c.ig_steps}}.get(base, {})
        methods.append(build_word_importance({"@importance": m, **params}))
    try:  # a classifier an attribution method cannot explain stops the run here, before any item
        return Ensemble(models, methods, k=c.k, tau=c.tau or None, seed=seed, tau_rule=c.tau_rule,
                        cache=vote_cache(c.vote_cache, artifact_dir, model_names, relabelled))
    except ConfigError as exc:
        raise ConfigError(f"coba: {exc}; the attribution methods are chosen with -p importance=... "
                          f"(now {c.importance})") from None


def vote_cache(where: str, artifact_dir: Path, model_names: Sequence[str],
               relabelled: dict[str, list[str]] | None = None) -> Any:
    """The ensemble's vote cache (None when ``where`` is none), scoped to the classifiers' files: the ones
    trained into ``artifact_dir`` and those given by path, and to the labels of the folders read under
    other names than their own (``relabelled``: another order puts a label on another output)."""
    from cfaug.importance.cache import VoteCache, default_vote_cache_dir, models_scope

    choice = where.strip().lower()
    if choice in ("none", "off", "false", ""):
        return None
    folder = default_vote_cache_dir() if choice == "auto" else Path(where).expanduser()
    by_path = [p for p in (Path(n).expanduser() for n in model_names) if p.is_dir()]
    trained = artifact_dir / "models"
    return VoteCache(folder, models_scope(*([trained] if trained.exists() else []), *by_path, labels=relabelled))


def source_labels(ensemble: Any, items: Sequence[WorkItem], texts: Sequence[str]) -> list[str]:
    """The records' labels; unlabelled rows take the first model's prediction."""
    missing = [i for i, it in enumerate(items) if it.record.label is None]
    labels = [str(it.record.label) for it in items]
    if missing:
        model = next(iter(ensemble.models.values()))
        probs = model.predict_proba([texts[i] for i in missing])
        for i, p in zip(missing, probs):
            labels[i] = model.labels[int(np.argmax(p))]
    return labels


def extra_spurious_words(spec: str | None) -> set[str]:
    """The words ``spurious_words`` adds to the spurious ones: the WinoBias gender words ('gender'), the
    lines of a file, or none."""
    if not spec:
        return set()
    if spec == "gender":
        from cfaug.nlp.gender import gender_pairs

        return set(gender_pairs())
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ConfigError(f"spurious_words: {spec} is neither 'gender' nor a readable file")
    return {w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()}


__all__ = ["build_ensemble", "extra_spurious_words", "source_labels", "vote_cache"]
