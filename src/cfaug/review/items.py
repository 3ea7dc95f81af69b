"""What people review: the counterfactual rows of a run directory, as :class:`Item` objects.

An item is one row of one line of ``results.jsonl`` (a row in the output contract of
:mod:`cfaug.data.contract`: the text column(s) with the new text, the label column with the target,
``original_<col>`` columns, ``source_id``, ``method``, ``meta``). Its id is ``"<key>#<n>"``: the line's
``key`` and the row's index in that line's ``counterfactuals``; decisions (:mod:`cfaug.run.decisions`),
the judge's verdicts (:mod:`cfaug.evaluate.judgements`) and exports use it.

The file is only read: a half-written last line (a run still writing, or one killed) is skipped, not
truncated; a later line for a key replaces an earlier one only when the earlier one failed (a retry),
as :meth:`cfaug.run.rundir.RunDir.finished` reads it.
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfaug.data.io import DataError
from cfaug.data.labels import LabelError
from cfaug.data.tasks import Task
from cfaug.evaluate.judgements import read_judgements, text_hash
from cfaug.evaluate.pairs import task_from_config
from cfaug.run.rundir import RunDir

if TYPE_CHECKING:
    from cfaug.run.decisions import ReviewStore

try:  # a faster reader where it is installed (a 100,000-row run opens in about half the time)
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - depends on the environment
    _loads = json.loads


@dataclass(frozen=True, slots=True)
class Columns:
    """Which output columns hold what: ``text`` (task role -> column with the new text), ``label`` (the
    target label), ``original`` (role -> ``original_<col>``) and ``original_label``."""

    text: dict[str, str]
    label: str
    original: dict[str, str]
    original_label: str

    @classmethod
    def from_config(cls, config: dict[str, Any], task: Task) -> Columns:
        """The columns a run wrote, from its ``config.json`` schema (task roles and ``label`` by default)."""
        sc = config.get("schema") or {}
        text = dict(sc.get("text_cols") or {}) or {r: r for r in task.roles}
        label = sc.get("label_col") or "label"
        return cls(text=text, label=label, original={r: f"original_{c}" for r, c in text.items()},
                   original_label=f"original_{label}")


@dataclass(slots=True)
class Item:
    """One counterfactual row to review (read-only by convention: not frozen, which would make creating
    100,000 of them ten times slower).

    ``original`` / ``rewrite``: role -> text before and after (every role of the task; for NLI the
    unedited side is the same in both). ``source_label`` / ``target_label``: task labels (canonical
    names; the row's spelling when it is not a label of the task). ``own_confidence``: the generator's
    own judge's probability of the target (``meta.own_judge.target_prob``, else ``meta.confidence``).
    ``own_threshold``: the probability at which the own judge calls it flipped (0.5 unless the row says).
    ``independent``: the independent judge's verdict from ``judgements.jsonl`` (``judge``, ``predicted``,
    ``target_prob``, ``flipped``), None when ``cfaug evaluate`` has not judged this row (or its text
    changed since). ``passed``: whether the method's filters passed it. ``row``: the whole output row."""

    id: str
    source_id: str
    method: str
    original: dict[str, str]
    rewrite: dict[str, str]
    source_label: str | None
    target_label: str | None
    own_confidence: float | None
    independent: dict[str, Any] | None
    row: dict[str, Any]
    own_threshold: float = 0.5
    passed: bool = True

    @property
    def own_flipped(self) -> bool | None:
        """Whether the own judge calls it flipped (``meta.own_judge.flipped``, else confidence >= threshold)."""
        own = self.row.get("meta", {}).get("own_judge") if isinstance(self.row.get("meta"), dict) else None
        if isinstance(own, dict) and isinstance(own.get("flipped"), bool):
            return own["flipped"]
        return None if self.own_confidence is None else self.own_confidence >= self.own_threshold

    @property
    def independent_flipped(self) -> bool | None:
        """Whether the independent judge predicted the target label (None when it has not judged the row)."""
        if not self.independent:
            return None
        if isinstance(self.independent.get("flipped"), bool):
            return self.independent["flipped"]
        pred = self.independent.get("predicted")
        return None if pred is None else pred == self.target_label

    @property
    def judges_disagree(self) -> bool:
        """The own judge says flipped and the independent one not, or the other way round."""
        own, ind = self.own_flipped, self.independent_flipped
        return own is not None and ind is not None and own != ind

    @property
    def choice_score(self) -> float | None:
        """The choice step's score of the row (``meta.choice.score``: an independent judge's P(target),
        fluency and closeness), None when the row has none."""
        meta = self.row.get("meta")
        choice = meta.get("choice") if isinstance(meta, dict) else None
        score = choice.get("score") if isinstance(choice, dict) else None
        return float(score) if _is_number(score) else None

    @property
    def margin(self) -> float | None:
        """How sure the judges are: the own confidence's distance from its threshold (else the independent
        judge's target probability's distance from 0.5); None when neither says."""
        if self.own_confidence is not None:
            return abs(self.own_confidence - self.own_threshold)
        prob = (self.independent or {}).get("target_prob")
        return abs(prob - 0.5) if _is_number(prob) else None


@dataclass
class ItemSet:
    """The items of a run directory, in file order, with its task and columns. ``problems``: rows that
    could not be read as items (file, line, row and what is wrong); ``failed_left_out``: rows the
    method's filters rejected, not loaded unless ``include_failed``."""

    run_dir: Path
    items: list[Item]
    task: Task
    columns: Columns
    config: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    failed_left_out: int = 0
    #: the review order: ``judges`` (where the judges disagree, then the least sure) or ``choice`` (the lowest
    #: score of the choice step first, ``meta.choice.score``; rows without one last)
    order_by: str = "judges"
    _order: list[Item] | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def by_id(self) -> dict[str, Item]:
        """Items by id."""
        return {it.id: it for it in self.items}

    def label_surfaces(self) -> dict[str, str]:
        """Canonical label -> how the run's rows spell it (``Negative`` for ``negative``); a label no row
        names is left out."""
        out: dict[str, str] = {}
        cols = self.columns
        for it in self.items:
            for canon, col in ((it.target_label, cols.label), (it.source_label, cols.original_label)):
                raw = it.row.get(col)
                if canon is not None and isinstance(raw, str):
                    out.setdefault(canon, raw)
            if len(out) >= len(self.task.label_space.labels):
                break
        return out

    def ordered(self, *, method: str | None = None,
                confidence: tuple[float | None, float | None] | None = None,
                store: ReviewStore | None = None, annotator: str | None = None,
                exclude: Collection[str] = ()) -> list[Item]:
        """The items in review order (:attr:`order_by`): by default first those where the judges disagree, then
        the least sure (smallest :attr:`Item.margin`; items no judge scored come after), then file order; with
        ``choice``, the lowest :attr:`Item.choice_score` first.

        Filters: ``method``; ``confidence`` = (low, high), either end None for open, on the own judge's
        confidence (items without one are left out when a range is given); ``store`` with ``annotator``:
        only the items that annotator has no live decision on; ``exclude``: item ids to leave out."""
        lo, hi = confidence if confidence is not None else (None, None)
        skip = set(exclude)
        if store is not None and annotator is not None:
            skip |= {item for item, _ in store.current(annotator)}
        elif store is not None or annotator is not None:
            raise ValueError("the undecided filter needs both a store and an annotator")
        ranged = lo is not None or hi is not None
        out = []
        for it in self._review_order():
            if (method is not None and it.method != method) or (skip and it.id in skip):
                continue
            if ranged:
                c = it.own_confidence
                if c is None or (lo is not None and c < lo) or (hi is not None and c > hi):
                    continue
            out.append(it)
        return out

    def _review_order(self) -> list[Item]:
        """All items in review order, worked out once (items are not changed once loaded)."""
        if self._order is None or len(self._order) != len(self.items):
            with _no_gc():
                keys = []
                for n, it in enumerate(self.items):
                    if self.order_by == "choice":
                        c = it.choice_score
                        keys.append((0, math.inf if c is None else c, n))
                        continue
                    m = it.margin
                    keys.append((0 if it.judges_disagree else 1, math.inf if m is None else m, n))
                keys.sort()
                self._order = [self.items[k[2]] for k in keys]
        return self._order


def load_items(run_dir: str | os.PathLike[str], *, include_failed: bool = False) -> ItemSet:
    """The items of ``run_dir`` (see the module docstring). Raises :class:`~cfaug.data.io.DataError` when
    it is not a run directory (no ``config.json`` or no ``results.jsonl``). Rows that cannot be items are
    listed in :attr:`ItemSet.problems`."""
    with _no_gc():
        return _load_items(Path(run_dir), include_failed)


@contextmanager
def _no_gc() -> Iterator[None]:
    """The garbage collector off: it would walk the growing heap again and again while 100,000s of small
    objects are made (none of them cyclic garbage); reading a large run is about four times faster."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_items(path: Path, include_failed: bool) -> ItemSet:
    cfg_file, results = path / "config.json", path / RunDir.RESULTS
    if not path.is_dir():
        raise DataError(f"{path}: not a directory (expected a run directory of 'cfaug augment')")
    if not cfg_file.exists():
        raise DataError(f"{path}: not a run directory (no config.json)")
    try:
        config = json.loads(cfg_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(f"{cfg_file}: not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise DataError(f"{cfg_file}: expected a JSON object")
    task = task_from_config(config)
    cols = Columns.from_config(config, task)
    verdicts = read_judgements(path)
    out = ItemSet(path, [], task, cols, config)
    if not results.exists():
        raise DataError(f"{path}: not a run directory (no {RunDir.RESULTS}: no item has finished yet)")
    make = _ItemMaker(task, cols, verdicts, include_failed)
    for lineno, line in _result_lines(results, out.problems):
        key = line.get("key")
        for n, row in enumerate(line.get("counterfactuals") or ()):
            item = make(f"{key}#{n}", row)
            if isinstance(item, Item):
                out.items.append(item)
            elif item == _FAILED:
                out.failed_left_out += 1
            else:
                out.problems.append(f"{results}, line {lineno}, row {n}: {item}")
    return out


def _result_lines(path: Path, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of the lines that count, in file order; read-only."""
    data = path.read_bytes()
    data = data[: data.rfind(b"\n") + 1]  # a half-written last line is not read
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = _loads(raw)
        except ValueError:
            problems.append(f"{path}, line {lineno}: not valid JSON")
            continue
        if not isinstance(obj, dict) or "key" not in obj:
            problems.append(f"{path}, line {lineno}: not a result line (no 'key')")
            continue
        key = str(obj["key"])
        if key not in chosen or chosen[key][1].get("status") == "error":
            chosen[key] = (lineno, obj)
    return sorted(chosen.values(), key=lambda t: t[0])


_FAILED = "failed"


class _ItemMaker:
    """Turns output rows into items (the column lookups worked out once: a run may hold 100,000 rows)."""

    def __init__(self, task: Task, cols: Columns, verdicts: dict[str, dict[str, Any]], include_failed: bool) -> None:
        self.task, self.cols, self.verdicts, self.include_failed = task, cols, verdicts, include_failed
        self.text_cols = [(role, cols.text.get(role, role), cols.original.get(role, f"original_{cols.text.get(role, role)}"))
                          for role in task.roles]
        self.memo: dict[Any, str | None] = {}

    def __call__(self, item_id: str, row: Any) -> Item | str:
        """The item, :data:`_FAILED` for a row the filters rejected (unless kept), or what is wrong."""
        if not isinstance(row, dict):
            return "not an object"
        meta = row.get("meta")
        if not isinstance(meta, dict):
            meta = {}
        passed = meta.get("passed") is not False
        if not passed and not self.include_failed:
            return _FAILED
        rewrite, original = {}, {}
        for role, col, ocol in self.text_cols:
            new, old = row.get(col), row.get(ocol)
            if type(new) is not str:
                return f"no text in column {col!r}"
            rewrite[role] = new
            original[role] = old if type(old) is str else ""
        own = meta.get("own_judge")
        if isinstance(own, dict):
            conf, threshold = own.get("target_prob"), own.get("threshold")
            if not _is_number(conf):
                conf = meta.get("confidence")
        else:
            conf, threshold = meta.get("confidence"), None
        verdict = self.verdicts.get(item_id) if self.verdicts else None
        if verdict is not None and verdict.get("text_sha1") not in (None, _judged_hash(rewrite, self.task)):
            verdict = None  # the judge read another text than this row now holds
        return Item(item_id, str(row.get("source_id", "")), str(row.get("method") or ""), original, rewrite,
                    _label(row.get(self.cols.original_label), self.task, self.memo),
                    _label(row.get(self.cols.label), self.task, self.memo),
                    float(conf) if _is_number(conf) else None, verdict, row,
                    float(threshold) if _is_number(threshold) else 0.5, passed)


def _judged_hash(rewrite: dict[str, str], task: Task) -> str:
    roles = task.roles
    return text_hash(rewrite[roles[0]] if len(roles) == 1 else tuple(rewrite[r] for r in roles))


def _label(raw: Any, task: Task, memo: dict[Any, str | None]) -> str | None:
    try:
        return memo[raw]
    except (KeyError, TypeError):
        pass
    if raw is None or raw == "":
        out = None
    else:
        try:
            out = task.label_space.canonical(raw)
        except (LabelError, ValueError):
            out = str(raw)
    try:
        memo[raw] = out
    except TypeError:  # an unhashable value in the label column
        pass
    return out


def _is_number(x: Any) -> bool:
    t = type(x)
    return (t is float or t is int or (t is not bool and isinstance(x, (int, float)))) and math.isfinite(x)
