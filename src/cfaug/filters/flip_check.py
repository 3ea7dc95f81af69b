"""The flip check: an independent classifier reads each rewrite before it is written under its target label.

A language model asked for a label flip often returns a rewrite that does not flip ("the service was amazing,
but the staff were very friendly" as a negative), or its source again but for a function word ("they also
have lost sight of ..." -> "they have lost sight of ..."): a near copy fails the check whatever the judge
says. The check keeps a rewrite only when a label judge that is
not the generator gives it the target label with probability at least ``min_prob``; a rewrite that fails
keeps its row in ``results.jsonl`` with the verdict ``flip_check: false`` and the judge's label, and is
counted among the filtered-out candidates of the run summary.

Judges (the ``flip_check`` parameter of the LLM methods):

* ``auto`` (default): ``general`` where the task is binary sentiment on one text, none elsewhere (the run
  says so in its manifest).
* ``general``: TF-IDF + logistic regression trained on the shipped general sentiment sample (10,000 Yelp
  review sentences and 10,000 SST-2 phrases), trained once per run.
* ``tfidf``: the same classifier trained on ``flip_check_data`` (a labelled file with the task's labels).
* ``hf``: a local Hugging Face sequence classifier, ``flip_check_model`` (and ``flip_check_labels``).
* ``none``: no check (the ``paper`` presets, where the paper filtered nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.records import Counterfactual
from cfaug.data.tasks import Task
from cfaug.filters.base import record_filters
from cfaug.judges.registry import JudgeContext, build_judge

#: the choices of the ``flip_check`` parameter
CHOICES = ("auto", "general", "tfidf", "hf", "none")
#: the verdict's name in ``meta["filters"]``
NAME = "flip_check"


@dataclass
class FlipCheck:
    """A label judge and the threshold a rewrite's target probability must reach. ``info`` describes the
    judge for the run manifest and every checked row."""

    judge: Any
    task: Task
    min_prob: float = 0.5
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.mapping: dict[str, str] = {}
        for lab in self.judge.labels:
            try:
                self.mapping[lab] = self.task.label_space.canonical(lab)
            except ValueError:
                raise ConfigError(f"flip check: the judge's label {lab!r} is not a label of task {self.task.name} "
                                  f"({', '.join(self.task.label_space.labels)}); pass flip_check_labels in the "
                                  "model's output order") from None

    def apply(self, cfs: Sequence[Counterfactual]) -> None:
        """Judge every candidate that passed its method's own checks and record the verdict in its ``meta``
        (``filters.flip_check``, and ``flip_check``: the judge's label and its probability of the target)."""
        todo = [cf for cf in cfs if isinstance(cf, Counterfactual) and cf.passed]
        if not todo:
            return
        roles = self.task.roles
        inputs = [cf.fields[roles[0]] if len(roles) == 1 else (cf.fields[roles[0]], cf.fields[roles[1]])
                  for cf in todo]
        probs = self.judge.predict_proba(inputs)
        labels = list(self.judge.labels)
        for cf, row in zip(todo, probs):
            best = labels[int(row.argmax())]
            target_prob = float(sum(p for lab, p in zip(labels, row) if self.mapping[lab] == cf.target))
            copy = near_copy_of_source(cf, roles)
            ok = self.mapping[best] == cf.target and target_prob >= self.min_prob and not copy
            cf.meta[NAME] = {"judge": self.info.get("judge", self.judge.name), "label": self.mapping[best],
                             "target_prob": round(target_prob, 4)}
            verdicts = dict(cf.meta.get("filters") or {})
            verdicts[NAME] = ok
            notes = dict(cf.meta.get("filter_notes") or {})
            if copy:
                notes[NAME] = "a near copy of the source: only function words differ"
            elif not ok:
                notes[NAME] = (f"the flip check's judge reads {self.mapping[best]}, not {cf.target} "
                               f"(P(target) {target_prob:.2f})")
            record_filters(cf.meta, verdicts, notes or None)


def near_copy_of_source(cf: Counterfactual, roles: Sequence[str]) -> bool:
    """Whether every rewritten field of ``cf`` repeats its source's but for function words
    (:func:`~cfaug.nlp.tokens.near_copy`)."""
    from cfaug.nlp.tokens import near_copy

    changed = [r for r in roles if cf.fields.get(r) != cf.source.fields.get(r)]
    return bool(changed) and all(near_copy(cf.source.fields.get(r, ""), cf.fields.get(r, "")) for r in changed)


def build_flip_check(choice: str, task: Task, *, data: str | None = None, model: str | None = None,
                     labels: str | None = None, min_prob: float = 0.5, seed: int = 0,
                     device: str = "cpu") -> tuple[FlipCheck | None, dict[str, Any]]:
    """The flip check ``choice`` names for ``task`` (see the module docstring), and what the manifest
    records about it (the judge, or why there is none)."""
    if choice not in CHOICES:
        raise ConfigError(f"flip_check must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "auto":
        if not binary_sentiment(task):
            return None, {"flip_check": "none", "why": f"no packaged judge for task {task.name}: name one with "
                                                      "flip_check=tfidf flip_check_data=FILE or flip_check=hf "
                                                      "flip_check_model=DIR"}
        choice = "general"
    if choice == "none":
        return None, {"flip_check": "none"}
    ctx = JudgeContext(task, seed=seed, device=device)
    if choice == "general":
        if not binary_sentiment(task):
            raise ConfigError(f"flip_check=general is a binary sentiment judge; task {task.name} has labels "
                              f"{', '.join(task.label_space.labels)}")
        judge = general_judge(ctx)
    elif choice == "tfidf":
        if not data:
            raise ConfigError("flip_check=tfidf needs flip_check_data=FILE: a labelled dataset to train it on")
        judge = build_judge({"@judges": "tfidf", "data": data}, ctx)
    else:
        if not model:
            raise ConfigError("flip_check=hf needs flip_check_model=DIR: a local sequence classifier folder")
        judge = build_judge({"@judges": "hf-classifier", "path": model, "labels": labels}, ctx)
    info = {"flip_check": choice, "judge": judge.name, "min_prob": min_prob, **judge.describe()}
    return FlipCheck(judge, task, min_prob, info), info


def binary_sentiment(task: Task) -> bool:
    """Whether ``task`` labels single texts negative or positive: what the general judge can read."""
    return set(task.label_space.labels) == {"negative", "positive"} and len(task.roles) == 1


def general_judge(ctx: JudgeContext) -> Any:
    """TF-IDF + logistic regression trained on the shipped general sentiment sample: trained once per sample
    version, seed and scikit-learn version, and kept in the model store (``$CFAUG_MODEL_STORE/judges``), so a
    later run loads it in a fraction of a second."""
    import hashlib

    import sklearn

    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
    from cfaug.data.io.atomic import atomic_path
    from cfaug.judges.builtin import GENERAL_BACKGROUND, background_records, general_background_path, judge_input
    from cfaug.training.store import default_store_dir

    digest = hashlib.sha256(general_background_path().read_bytes())
    digest.update(f"\0tfidf-logreg\0seed={ctx.seed}\0sklearn={sklearn.__version__}".encode())
    path = default_store_dir() / "judges" / f"general-{digest.hexdigest()[:16]}.pkl"
    if path.is_file():
        try:
            return TfidfLinearJudge.load(path)
        except Exception:  # noqa: BLE001 - a damaged copy is trained again
            pass
    judge = build_judge({"@judges": "tfidf"}, ctx)
    records, facts = background_records(GENERAL_BACKGROUND, ctx)
    judge.fit([judge_input(r.fields, ctx.task.roles) for r in records], [r.label for r in records])
    judge.provenance = {"train_data": "general (shipped sample)", "train_rows": len(records),
                        "train_data_sha256": facts.get("background_sha256")}
    with atomic_path(path) as tmp:  # whole or not at all: a second process never reads half a file
        judge.save(tmp)
    return judge


__all__ = ["CHOICES", "FlipCheck", "NAME", "binary_sentiment", "build_flip_check", "general_judge"]
