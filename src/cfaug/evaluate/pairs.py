"""The typed input of evaluation: (original, counterfactual, target) pairs read from an output file of
``cfaug augment``, from a run directory, or from any file with original/counterfactual/target columns."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.io import DataError, Reject, read_dataset
from cfaug.data.schema import Schema, SchemaError
from cfaug.data.tasks import Task, make_task
from cfaug.data.inputs import JudgeInput
from cfaug.run.rundir import RunDir


@dataclass(frozen=True)
class CounterfactualPair:
    """One counterfactual beside its original.

    ``original`` and ``counterfactual`` are the texts of the edited field (the premise or hypothesis for
    NLI, the text otherwise); ``judge_input`` is what a label judge reads for the counterfactual (the
    text, or the (premise, hypothesis) pair). ``passed`` is False for a candidate a generation filter
    rejected (present only in run directories or files written with ``--keep-failed``). ``meta`` is the
    provenance object of the output contract; ``columns`` the row's other columns. ``item_id``: for a
    pair read from a run directory, the row's id there (``"<key>#<n>"``: the ``results.jsonl`` line's key
    and the row's index in its ``counterfactuals``), the id review decisions use; None otherwise.
    """

    source_id: str
    original: str
    counterfactual: str
    target: str
    judge_input: JudgeInput
    original_label: str | None = None
    method: str = ""
    passed: bool = True
    meta: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)
    item_id: str | None = None


@dataclass
class PairSet:
    """Pairs read from one source, the rows that could not be used, and where they came from."""

    pairs: list[CounterfactualPair]
    rejects: list[Reject]
    source: str
    task: Task
    run_config: dict[str, Any] | None = None

    def methods(self) -> list[str]:
        return sorted({p.method for p in self.pairs})

    def only(self, method: str | None = None, passed: bool | None = True) -> list[CounterfactualPair]:
        """Pairs of one method (all when ``None``), keeping only passing ones unless ``passed=None``."""
        return [p for p in self.pairs if (method is None or p.method == method)
                and (passed is None or p.passed == passed)]


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    p = Path(path)
    return p.is_dir() and (p / RunDir.RESULTS).exists() and (p / "config.json").exists()


def load_pairs(
    source: str | os.PathLike[str],
    task: Task | None = None,
    *,
    text_col: str | None = None,
    label_col: str | None = None,
    original_col: str | None = None,
    fmt: str | None = None,
) -> PairSet:
    """Read counterfactual pairs from ``source``.

    * a run directory (``results.jsonl`` + ``config.json``): every candidate, including those a filter
      rejected (``passed=False``); the task and columns come from the run's config;
    * an output file of ``cfaug augment``: the text column(s) hold the counterfactual, the label column
      the target, ``original_<column>`` the original (the contract of :mod:`cfaug.data.contract`);
    * any other table: name the columns with ``text_col`` (counterfactual), ``label_col`` (target) and
      ``original_col``; columns called ``counterfactual``, ``target`` and ``original`` are found alone.

    Bad rows (missing text, unknown label) become rejects naming file, row and problem.
    """
    if is_run_dir(source):
        return _load_run_dir(Path(source), task)
    task = task or make_task("sentiment")
    name, rows, rejects = _raw_rows(source, fmt)
    schema = _schema(task, text_col, label_col)
    try:
        data = read_dataset(rows, task, schema)
    except SchemaError as exc:
        if text_col or label_col:
            raise SchemaError(str(exc).replace("<list>", name)) from None
        schema = _schema(task, "counterfactual", "target")
        try:
            data = read_dataset(rows, task, schema)
        except SchemaError as exc2:
            raise SchemaError(str(exc2).replace("<list>", name)) from None
    rejects += [Reject(name, rows[r.row - 1][ROW_KEY], r.problem, r.raw) for r in data.rejects]
    return _to_pairs(data.records, rejects, name, task, data.schema, original_col)


ROW_KEY = "__cfaug_row__"
#: column carrying a run directory row's item id through the readers (see ``CounterfactualPair.item_id``)
ITEM_KEY = "__cfaug_item__"


def _raw_rows(source: Any, fmt: str | None) -> tuple[str, list[dict[str, Any]], list[Reject]]:
    """Rows of a file with their row numbers; several rows may share an id (one original, many
    counterfactuals), so row numbers, not an id column, identify a row here."""
    from cfaug.data.io import open_rows  # the readers shared by every input path

    name, _, it = open_rows(source, fmt)
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for n, row in it:
        if isinstance(row, str):
            rejects.append(Reject(name, n, row))
        else:
            rows.append({**row, ROW_KEY: n})
    if not rows:
        raise DataError(f"{name}: no readable rows")
    return name, rows, rejects


def _schema(task: Task, text_col: str | None, label_col: str | None) -> Schema:
    text_cols: dict[str, str] = {}
    if text_col:
        if len(task.roles) != 1:
            raise SchemaError("text_col names a single text column; for NLI pass premise/hypothesis columns "
                              "through a Schema")
        text_cols[task.roles[0]] = text_col
    return Schema(text_cols=text_cols, label_col=label_col, id_col=ROW_KEY)


def _to_pairs(records: Sequence[Any], rejects: list[Reject], source: str, task: Task, schema: Schema,
              original_col: str | None, run_config: dict[str, Any] | None = None) -> PairSet:
    role = task.edit_roles[0]
    new_col = schema.text_cols[role]
    label_col = schema.label_col or "label"
    candidates = [original_col] if original_col else [f"original_{new_col}", "original"]
    pairs: list[CounterfactualPair] = []
    rejects = list(rejects)
    for n, rec in enumerate(records, start=1):
        col = next((c for c in candidates if c and c in rec.meta), None)
        orig = rec.meta.get(col) if col else None
        if orig is None or not str(orig).strip():
            rejects.append(Reject(source, _row_of(rec, n), f"no original text (looked for column "
                                  f"{' or '.join(repr(c) for c in candidates)})"))
            continue
        meta = rec.meta.get("meta") or {}
        if isinstance(meta, str):
            try:
                meta = json.loads(meta) if meta.strip() else {}
            except ValueError:
                rejects.append(Reject(source, _row_of(rec, n), "column 'meta' is not valid JSON"))
                continue
        orig_label = rec.meta.get(f"original_{label_col}")
        try:
            orig_label = task.label_space.read(orig_label) if orig_label not in (None, "") else None
        except ValueError:
            orig_label = None
        judge_input: JudgeInput
        if len(task.roles) == 1:
            judge_input = rec.fields[role]
        else:
            judge_input = tuple(rec.fields[r] for r in task.roles)  # type: ignore[assignment]
        pairs.append(CounterfactualPair(
            source_id=str(rec.meta.get("source_id") or rec.meta.get("id") or rec.id), original=str(orig),
            counterfactual=rec.fields[role], target=rec.label, judge_input=judge_input,
            original_label=orig_label, method=str(rec.meta.get("method") or ""),
            passed=bool(meta.get("passed", True)) if isinstance(meta, dict) else True,
            meta=meta if isinstance(meta, dict) else {},
            columns={k: v for k, v in rec.meta.items() if k not in ("meta", ITEM_KEY)},
            item_id=rec.meta.get(ITEM_KEY)))
    return PairSet(pairs, rejects, source, task, run_config)


def _row_of(rec: Any, n: int) -> int:
    try:
        return int(rec.id)
    except (TypeError, ValueError):
        return n


def task_from_config(config: dict[str, Any]) -> Task:
    """Rebuild the task a run used from its ``config.json``."""
    t = config.get("task") or {}
    name = t.get("name", "sentiment")
    edit_roles = t.get("edit_roles") or ["premise"]
    return make_task(name, target=t.get("target", "opposite"),
                     edit_side=edit_roles[0] if name == "nli" else "premise",
                     levels=tuple(t["levels"]) if t.get("levels") else None)


def _result_lines(path: Path) -> list[dict[str, Any]]:
    """Finished items of a run, first line per key; read-only, so a run still writing is left alone
    (a half-written last line is skipped, not truncated)."""
    seen: dict[str, dict[str, Any]] = {}
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                seen.setdefault(str(obj.get("key")), obj)
    return list(seen.values())


def _load_run_dir(path: Path, task: Task | None) -> PairSet:
    rd = RunDir(path)
    config = rd.read_json("config.json")
    task = task or task_from_config(config)
    sc = config.get("schema") or {}
    schema = Schema(text_cols=dict(sc.get("text_cols") or {}), label_col=sc.get("label_col"), id_col=ROW_KEY)
    name = str(path / RunDir.RESULTS)
    rows: list[dict[str, Any]] = []
    for line in _result_lines(path / RunDir.RESULTS):
        rows.extend({**row, ITEM_KEY: f"{line.get('key')}#{n}"}
                    for n, row in enumerate(line.get("counterfactuals") or []))
    for n, row in enumerate(rows, start=1):
        row[ROW_KEY] = n  # candidate number: an item may hold several candidates
    if not rows:
        return PairSet([], [], name, task, config)
    try:
        data = read_dataset(rows, task, schema)
    except (DataError, SchemaError) as exc:
        raise DataError(f"{name}: {str(exc).replace('<list>: ', '')}") from exc
    rejects = [Reject(name, rows[r.row - 1][ROW_KEY], r.problem) for r in data.rejects]
    return _to_pairs(data.records, rejects, name, task, data.schema, None, config)
