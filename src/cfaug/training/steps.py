"""Resumable steps inside an artifact folder: a small build system for a method that trains in several steps,
each writing its own files into the model folder.

A JSON record in the folder (``stages.json`` by default) holds each finished step's facts under their keys and,
under ``steps_made_with``, what every step was made from: the training data's hash
(:func:`cfaug.data.fingerprint.hash_records`, as ``train_sha256``) and the values of the parameters the step
depends on and of those of every step before it. When ``fit`` runs again on the folder:

- a step whose facts are recorded (and whose files are there) is done: the method loads its output instead of
  making it again (:meth:`StepRecord.done`);
- the first step recorded from other data or other parameter values is forgotten, facts and files, with every
  step after it, so that it is redone (:meth:`StepRecord.start`).

A parameter added to a step after folders were recorded is declared with the value its behaviour had before
(``added``): a step recorded without it counts as made with that value, so old folders keep their steps.

    steps = StepRecord(ctx.artifact_dir, [Step("tagger", ("epochs",), facts=("tagger",), files=("tagger",)),
                                          Step("generator", ("lr",), facts=("generator",), files=("generator",))],
                       log=ctx.log, label="my-method")
    steps.start(method.fit_params(), records=records)
    if not steps.done("tagger", "tagger"):
        ...                                  # train it, write ctx.path("tagger")
        steps.save("tagger", {"epochs": 3})  # the step's facts: it is done
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.data.fingerprint import hash_records
from cfaug.training.context import FitContext

RECORD_FILE = "stages.json"
MADE_WITH_KEY = "steps_made_with"
#: the key of the training data's hash in each step's record
DATA_KEY = "train_sha256"


@dataclass(frozen=True)
class Step:
    """One step of a training pipeline: the parameters it depends on (besides the training data and the steps
    before it), the keys of the facts it records and the files or folders it writes into the artifact folder
    (removed when it is redone)."""

    name: str
    params: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


class StepRecord:
    """The record of a folder's steps (see the module docstring). ``facts`` is the record as a dict: what
    ``fit`` returns."""

    def __init__(self, folder: str | Path, steps: Sequence[Step], *, record_file: str = RECORD_FILE,
                 key: str = MADE_WITH_KEY, added: Mapping[str, Any] | None = None,
                 log: Callable[[str], None] | None = None, label: str = "") -> None:
        self.folder = Path(folder)
        self.steps = tuple(steps)
        self.file = self.folder / record_file
        self.key = key
        self.added = dict(added or {})
        self.log = log or (lambda message: None)
        self.label = label
        self.facts: dict[str, Any] = json.loads(self.file.read_text(encoding="utf-8")) if self.file.exists() else {}
        self._as_read = json.dumps(self.facts, sort_keys=True)

    def path(self, name: str) -> Path:
        return self.folder / name

    def made_with(self, values: Mapping[str, Any], *, records: Iterable[Any] | None = None,
                  inputs: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
        """What each step is made from now: the inputs (``records`` as :data:`DATA_KEY`, and ``inputs``), then
        the values of its own parameters and those of the steps before it."""
        cumulative: dict[str, Any] = {}
        if records is not None:
            cumulative[DATA_KEY] = hash_records(records)
        cumulative.update(inputs or {})
        out: dict[str, dict[str, Any]] = {}
        for step in self.steps:
            cumulative.update({n: values.get(n) for n in step.params})
            out[step.name] = dict(cumulative)
        return out

    def start(self, values: Mapping[str, Any], *, records: Iterable[Any] | None = None,
              inputs: Mapping[str, Any] | None = None) -> list[str]:
        """Forget the steps (facts and files) the folder holds from other inputs or other parameter values,
        and every step after the first such one; record what each step is made from now, and write the record
        if it changed since it was read. Returns the steps forgotten: the first one recorded from other inputs
        or values (or not recorded at all) and every one after it; all of them in a new folder. A step is made
        when its facts are saved (:meth:`done`), not when it is recorded here."""
        current = self.made_with(values, records=records, inputs=inputs)
        used = self.facts.get(self.key, {})
        stale: list[str] = []
        for step in self.steps:
            recorded = used.get(step.name)
            if recorded is not None:  # a parameter added later: the folder's step was made with its old behaviour
                recorded = {**{n: v for n, v in self.added.items() if n in current[step.name]}, **recorded}
            if stale or recorded != current[step.name]:
                if used.get(step.name) is not None:
                    prefix = f"{self.label}: " if self.label else ""
                    self.log(f"{prefix}the model folder's {step.name} step was made with other data or "
                             "parameters; redoing it")
                self.forget(step)
                stale.append(step.name)
        self.facts[self.key] = current
        if json.dumps(self.facts, sort_keys=True) != self._as_read:
            self.write()
        return stale

    def forget(self, step: Step) -> None:
        """Remove a step's facts and files."""
        for key in step.facts:
            self.facts.pop(key, None)
        for name in step.files:
            path = self.path(name)
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()

    def done(self, key: str, *files: str) -> bool:
        """Whether the facts ``key`` are recorded and the ``files`` are in the folder."""
        return key in self.facts and all(self.path(name).exists() for name in files)

    def save(self, key: str, value: Any) -> None:
        """Record facts (a step, or part of one, is done) and write the record."""
        self.facts[key] = value
        self.write()

    def write(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_name(self.file.name + ".tmp")
        tmp.write_text(json.dumps(self.facts, indent=1) + "\n", encoding="utf-8")
        tmp.replace(self.file)
        self._as_read = json.dumps(self.facts, sort_keys=True)


def step_context(ctx: FitContext, name: str) -> FitContext:
    """A context whose artifact folder is a subfolder of ``ctx``'s (for one step's checkpoints)."""
    folder = ctx.path(name)
    folder.mkdir(parents=True, exist_ok=True)
    return FitContext.from_stage(ctx, folder, run_dir=ctx.run_dir)
