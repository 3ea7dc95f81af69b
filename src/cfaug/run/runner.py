"""The runner, in five steps: **read** the input (rejecting bad rows), **plan** the work items and what is
already done, **execute** the pending ones (training or loading the method first, then running them on an
engine of :mod:`cfaug.run.engines`: ``--engine`` for batch methods, the LLM loop for LLM methods; each
finished item is appended to the run directory), **collect** the finished lines in input order
(:mod:`cfaug.run.summary`), and **write** the output, manifest and summary.

A rerun of a finished run reads, plans and collects: it neither trains nor loads the method.

The output location is checked before anything else, and the run directory is made (and locked) only
once the input has been read; a run that fails before finishing any item removes the directory it made.
A run that stops early (server unreachable, budget spent) still writes what it has, and its summary says
so (``complete``, ``stop_reason``, ``items_not_done``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields
from datetime import datetime
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cfaug.config import ConfigError
from cfaug.data.contract import output_columns
from cfaug.data.fingerprint import code_hash, hash_source, versions
from cfaug.data.io import DataError, Dataset, output_kind, read_dataset, write_rows
from cfaug.data.records import Record, WorkItem
from cfaug.data.schema import Schema, parse_label_map
from cfaug.data.tasks import Task
from cfaug.errors import CfaugError
from cfaug.llm.redact import redact_argv, strip_userinfo
from cfaug.llm.ledger import read_usage
from cfaug.methods import build_method
from cfaug.methods.base import Method
from cfaug.run.context import stage_context
from cfaug.run.engines import Job, LLMLoop, make_engine
from cfaug.run.options import DEFAULT_METHOD, RunOptions
from cfaug.run.outputs import (
    OutputError,
    check_output,
    is_stdout,
    output_lock,
    param_caches,
    param_inputs,
    run_dir_inputs,
)
from cfaug.run.rundir import RunDir
from cfaug.run.summary import RunSummary, collect_results
from cfaug.run.training import Fitted, fit_or_load, read_model
from cfaug.training.context import StageContext
from cfaug.training.store import ArtifactStore

__all__ = ["OutputError", "Plan", "RunSummary", "Runner", "make_schema", "make_task_from", "method_for", "run"]

#: rejected rows named in the log; the rest are counted (all are in rejects.jsonl)
REJECTS_LOGGED = 20
#: the run directory's list of the rows ``--limit`` took (written only when it left rows out)
ROWS_TAKEN = "rows_taken.json"


@dataclass
class Plan:
    """What a run will do: the input rows it works on (``--limit`` applied), every work item, the ones still
    to run, and the lines already finished."""

    records: list[Record]
    items: list[WorkItem]
    pending: list[WorkItem]
    done: dict[str, dict[str, Any]]


def make_task_from(options: RunOptions, *, check_target: bool = True) -> Task:
    """The task the options ask for. With ``check_target=False`` the target is checked later, against the
    input's labels (:meth:`~cfaug.data.tasks.Task.check_target`)."""
    from cfaug.data.tasks import make_task

    levels = options.levels if isinstance(options.levels, tuple) else options.levels_tuple()
    return make_task(options.task, target=options.target, edit_side=options.edit_side, levels=levels,
                     check_target=check_target)


def make_schema(options: RunOptions, task: Task) -> Schema:
    """The column mapping the options ask for; ``--label-map`` values are checked against ``task``'s labels."""
    text_cols = {role: col for role, col in (("text", options.text_col), ("premise", options.premise_col),
                                              ("hypothesis", options.hypothesis_col)) if col}
    return Schema(text_cols=text_cols, label_col=options.label_col, id_col=options.id_col,
                  label_map=parse_label_map(options.label_map, task))


def method_for(options: RunOptions) -> tuple[Method, dict[str, Any], dict[str, Any] | None]:
    """The configured method, the parameters it was built with, and the model folder's description; with
    ``--model``, the method and its training parameters come from the model folder (a parameter given
    again must agree with it)."""
    from cfaug.methods import METHODS, method_params

    if not options.model:
        name = options.method or DEFAULT_METHOD
        params = method_params(name, options.params, options.preset)
        return build_method(name, params, options.seed), params, None
    info = read_model(options.model)
    if options.method and METHODS.resolve(options.method) != info.method:
        raise ConfigError(f"--model {options.model} was trained for {info.method}, not {options.method}")
    given = method_params(info.method, options.params, options.preset) if options.preset != "default" \
        else dict(options.params)
    from cfaug.config import build_config, config_dict

    cls = METHODS.get(info.method)
    typed = config_dict(build_config(cls.Config, {k: v for k, v in given.items() if k in info.fit_params},
                                     owner=cls.name))  # "0" and 0.0 are the same value
    clash = {k for k in given if k in info.fit_params and str(typed.get(k)) != str(info.fit_params[k])}
    if clash:
        raise ConfigError(f"--model {options.model} was trained with other values of {', '.join(sorted(clash))}; "
                          "train a new model or drop those parameters (or the preset)")
    # a method may add entries to its fit parameters that are no parameter of its config (CoBA: the sizes of
    # the torch classifiers it trains); they identify the model, they are not passed back
    known = {f.name for f in dataclass_fields(cls.Config)}
    params = {**{k: v for k, v in info.fit_params.items() if k in known}, **given}
    return build_method(info.method, params, options.seed), params, asdict(info)


class Runner:
    """One run of a method over a source; see the module docstring for its steps."""

    def __init__(self, source: Any, options: RunOptions, output: str | Path | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.source, self.options, self.output = source, options, output
        self.log = log or (lambda msg: print(msg, file=sys.stderr))
        self.started = time.time()  # wall clock: the manifest's ``started``, and ``seconds`` are counted from it
        self.task = make_task_from(options, check_target=False)  # checked against the input once read
        self.schema = make_schema(options, self.task)
        self.method, self.params, self.model_info = method_for(options)
        if not options.run_dir:
            raise ConfigError("a run needs a run directory")
        self.rd = RunDir(options.run_dir)
        self.facts: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.taken = ""  #: which rows ``--limit`` took, as the summary says it (empty: all of them)

    # -- 0. check where results go ---------------------------------------------------------------------
    def check_locations(self) -> None:
        """Fail before any work when the output or the run directory cannot be written: a path under a
        regular file, a folder this process cannot write to, an output format not known from the name, or
        an output that would overwrite an input or a file of the run directory (:mod:`cfaug.run.outputs`)."""
        if self.output is not None:
            o = self.options
            kind = output_kind(self.output if is_stdout(self.output) else Path(self.output).expanduser(),
                               o.output_format)
            check_output(self.output, "-o", inputs=[("", self.source), ("--train-data", o.train_data),
                                            ("--model", o.model), *param_inputs(o.params),
                                            *run_dir_inputs(self.rd.path)], folder=kind == "hf",
                         file=kind != "hf", stdout=True, run_dir=self.rd.path, caches=param_caches(o.params))
            if not is_stdout(self.output):
                _check_writable(Path(self.output).expanduser().parent, f"the output {self.output}")
        if self.rd.path.exists() and not self.rd.path.is_dir():
            raise OutputError(f"the run directory {self.rd.path} is a file, not a folder; pass another --run-dir")
        _check_writable(self.rd.path, f"the run directory {self.rd.path}")

    # -- 1. read ---------------------------------------------------------------------------------------
    def read(self) -> Dataset:
        """Read the input and build the run's config (nothing is written yet)."""
        o = self.options
        data = read_dataset(self.source, self.task, self.schema, fmt=o.input_format, max_chars=o.max_chars)
        self.task.check_target(data.records, data.source)
        config = {
            "method": self.method.name,
            "params": self.method.identity_params(),
            "task": {"name": self.task.name, "target": self.task.target, "edit_roles": list(self.task.edit_roles)},
            "schema": data.schema.to_config(),
            "seed": o.seed,
            "input": data.source,
            "input_hash": hash_source(self.source),
            "max_chars": o.max_chars,
            "limit": o.limit,
            "train_data": o.train_data and {"path": str(o.train_data), "hash": hash_source(o.train_data)},
            "model": self.model_info and {"path": str(o.model), "fingerprint": self.model_info["fingerprint"]},
        }
        self.config = _without_userinfo(config)
        self.out_schema = data.schema  # the columns as found in this input
        return data

    def open(self, data: Dataset) -> None:
        """Open the (locked) run directory with this run's config, and record the rejected rows."""
        o = self.options
        from cfaug.config import describe_params

        self.rd.open(self.config, overwrite=o.overwrite,
                     param_defaults={p.name: p.default for p in describe_params(type(self.method.config))})
        self.rd.write_lines("rejects.jsonl", (r.to_json() for r in data.rejects))
        for r in data.rejects[:REJECTS_LOGGED]:
            self.log(f"rejected: {r.message()}")
        if len(data.rejects) > REJECTS_LOGGED:
            self.log(f"... and {len(data.rejects) - REJECTS_LOGGED} more rejected rows "
                     f"(see {self.rd.path / 'rejects.jsonl'})")
        if not data.records:
            raise DataError(f"{data.source}: no usable rows; all {data.rows_read} were rejected "
                            f"(see {self.rd.path / 'rejects.jsonl'})")

    # -- 2. plan ---------------------------------------------------------------------------------------
    def plan(self, data: Dataset) -> Plan:
        o = self.options
        records = self.take(data.records)
        items = [WorkItem(r, t) for r in records for t in self.task.targets(r)]
        done = self.rd.finished()
        pending = []
        redrawn = 0
        for it in items:
            line = done.get(it.key)
            if line is None or (o.retry_failed and line.get("status") == "error"):
                pending.append(it)
            elif o.retry_failed and unreadable(line):  # answers were had, none readable: new seeds
                pending.append(WorkItem(it.record, it.target, int(line.get("draw") or 0) + 1))
                redrawn += 1
        if redrawn:
            self.log(f"--retry-failed: {redrawn} item(s) whose answers held nothing readable are drawn again "
                     "with new seeds")
        return Plan(records, items, pending, done)

    def take(self, records: list[Record]) -> list[Record]:
        """The records ``--limit`` takes (:mod:`cfaug.data.sampling`: a seeded sample balanced by label, in
        input order; all of them without a limit). A limited run writes their ids to ``rows_taken.json`` in the
        run directory, and says so in :attr:`taken`."""
        from cfaug.data.sampling import describe_taken, sample_positions

        o = self.options
        balanced = bool(self.task.label_space.labels)
        positions = sample_positions([r.id for r in records], [r.label for r in records] if balanced else None,
                                     o.limit, o.seed)
        chosen = [records[i] for i in positions]
        self.taken = ""
        if len(chosen) < len(records):
            rule = describe_taken(len(chosen), len(records), o.seed, balanced)
            self.taken = f"{rule}; ids in {self.rd.path / ROWS_TAKEN}"
            self.rd.write_json(ROWS_TAKEN, {"rule": rule, "limit": o.limit, "seed": o.seed, "of": len(records),
                                            "ids": [r.id for r in chosen]})
        else:
            (self.rd.path / ROWS_TAKEN).unlink(missing_ok=True)
        return chosen

    # -- 3. execute ------------------------------------------------------------------------------------
    def execute(self, data: Dataset, plan: Plan, manifest: dict[str, Any]) -> None:
        """Train or load the method, then run the pending items, appending each finished line. ``manifest`` is
        written again once the method is set up, with its facts (model, server, prompts), so a run that stops
        keeps them."""
        o = self.options
        ctx = stage_context(o, log=self.log, run_dir=self.rd.path)
        self.facts.update(self.method.prepare(plan.records, self.task, ctx) or {})
        fitted = self.fit(data, ctx) if self.method.trains else None
        if fitted is not None:
            self.facts["training"] = fitted.facts()
        self.rd.write_json("manifest.json", _without_userinfo({**manifest, "method_facts": self.facts}))
        bar = tqdm(total=len(plan.items), initial=len(plan.items) - len(plan.pending), desc=self.method.name,
                   unit="item", disable=not o.progress, file=sys.stderr)
        try:
            with self.rd.appender() as out:
                def on_line(line: dict[str, Any]) -> None:
                    out.append(line)
                    plan.done[line["key"]] = line
                    bar.update(1)

                if self.method.work_unit == "item":
                    if fitted is not None:
                        self.facts.update(self.method.load(fitted.path, self.task, ctx) or {})
                    self._execute_items(plan.pending, on_line)
                else:
                    self._execute_batches(plan.pending, fitted, ctx, on_line)
        finally:
            bar.close()
            self.extra.update(self.method.report() or {})
            self.method.close()

    def fit(self, data: Dataset, ctx: StageContext) -> Fitted:
        o = self.options
        if o.model:
            from cfaug.training.store import ArtifactInfo

            path = Path(o.model).expanduser()
            return Fitted(path, ArtifactInfo.read(path), False, 0.0)
        if o.train_data:
            train = read_dataset(o.train_data, self.task, self.schema, max_chars=o.max_chars)
            if train.rejects:
                self.log(f"training data: {len(train.rejects)} row(s) rejected, e.g. {train.rejects[0].message()}")
            records, source = train.records, str(o.train_data)
        else:
            records, source = data.records, f"the input ({data.source})"
        return fit_or_load(self.method, self.task, records, source, ctx, ArtifactStore(o.model_store))

    def _execute_batches(self, pending: Sequence[WorkItem], fitted: Fitted | None, ctx: StageContext,
                         on_line: Callable[[dict[str, Any]], None]) -> None:
        if not pending:
            return
        o = self.options
        bs = o.batch_size or self.method.default_batch_size
        batches = [list(pending[i: i + bs]) for i in range(0, len(pending), bs)]
        job = Job(self.method.name, dict(self.params), o.seed, self.task, self.out_schema,
                  str(fitted.path) if fitted else None, ctx.device, self.method.resources)
        engine = make_engine(o.engine, workers=o.workers, ray_address=o.ray_address)
        start = time.perf_counter()
        self.facts["engine"] = engine.execute(job, batches, on_line)
        self.facts["engine"]["seconds"] = round(time.perf_counter() - start, 3)
        self.facts["engine"]["items"] = len(pending)
        self.facts["batch_size"] = bs

    def _execute_items(self, pending: Sequence[WorkItem], on_line: Callable[[dict[str, Any]], None]) -> None:
        try:
            LLMLoop(self.options.concurrency).execute(self.method, pending, self.task, self.out_schema, on_line)
        except CfaugError as exc:  # a clean stop (budget spent, LLM unreachable) keeps results
            if not exc.clean_stop:
                raise
            self.stop_reason = self.extra["stopped"] = f"{type(exc).__name__}: {exc}"
            self.log(f"stopped early: {self.extra['stopped']}; rerun the same command to resume")

    # -- 4. collect and 5. write -----------------------------------------------------------------------
    def collect(self, data: Dataset, plan: Plan) -> tuple[list[dict[str, Any]], RunSummary]:
        rows, summary = collect_results(plan.items, plan.done, self.options.keep_failed)
        summary.rows_read = data.rows_read
        summary.input_columns = data.schema.describe()
        summary.rows_rejected = len(data.rejects)
        summary.rows_taken = self.taken
        summary.items_resumed = len(plan.items) - len(plan.pending)
        summary.run_dir = str(self.rd.path)
        summary.rejects_file = str(self.rd.path / "rejects.jsonl")
        summary.extra = self.extra
        summary.columns = output_columns(data.schema, data.extra_columns)
        summary.items_not_done = sum(1 for it in plan.items if it.key not in plan.done)
        summary.stop_reason = self.stop_reason
        summary.complete = summary.items_not_done == 0
        summary.first_error = next((plan.done[it.key].get("error") for it in plan.items
                                    if plan.done.get(it.key, {}).get("status") == "error"), None)
        return rows, summary

    def write(self, data: Dataset, rows: list[dict[str, Any]], summary: RunSummary, manifest: dict[str, Any]) -> None:
        """Write the output, then the manifest and summary. An OSError at this point (a full disk, a folder
        removed meanwhile) becomes an :class:`OutputError` saying the results are kept in the run
        directory, from which a rerun of the same command writes the output without redoing the work."""
        failed: OSError | None = None
        if self.output is not None:
            try:
                write_rows(rows, self.output, self.options.output_format, columns=summary.columns)
                summary.output = str(self.output)
            except OSError as exc:  # (the temporary file beside the output is already removed)
                failed = exc
        finished = time.time()
        summary.seconds = finished - self.started
        summary.peak_memory_mb = _peak_memory_mb()
        manifest["finished"] = _timestamp(finished)
        manifest["summary"] = asdict(summary)
        try:
            self.rd.write_json("manifest.json", _without_userinfo(manifest))
            self.rd.write_json("summary.json", asdict(summary))
        except OSError as exc:
            failed = failed or exc
        if failed is not None:
            what = f"the output {self.output}" if summary.output is None and self.output is not None \
                else f"the summary in {self.rd.path}"
            raise OutputError(
                f"could not write {what}: {failed.strerror or failed}; the results are kept in the run "
                f"directory {self.rd.path}: fix the problem and rerun the same command, which writes the output "
                "again without redoing the work") from failed

    def run(self) -> tuple[RunSummary, list[dict[str, Any]]]:
        self.check_locations()
        data = self.read()
        made = _make_dirs(self.rd.path)
        try:
            with self.rd.lock(), output_lock(self.output):
                self.open(data)
                return self._run(data)
        except BaseException:
            if made is not None:  # rejects are kept when they explain the failure (no usable row)
                _remove_if_empty(self.rd, made, keep_rejects=not data.records)
            raise

    def _run(self, data: Dataset) -> tuple[RunSummary, list[dict[str, Any]]]:
        plan = self.plan(data)
        built = {**versions(), "cfaug_code": code_hash()}
        earlier = self.earlier_builds(plan, built)
        manifest: dict[str, Any] = {
            "versions": built, "seed": self.options.seed, "input": data.source,
            "input_hash": self.config["input_hash"], "method": self.method.name, "command": redact_argv(sys.argv),
            "options": {k: v for k, v in asdict(self.options).items() if k != "params"},
            "started": _timestamp(self.started),
        }
        if earlier:
            manifest["earlier_versions"] = earlier
        if plan.pending:
            self.rd.write_json("manifest.json", _without_userinfo({**manifest, "method_facts": {}}))
            self.execute(data, plan, manifest)
            manifest["method_facts"] = self.facts
        else:
            previous = self.rd.read_json("manifest.json") if (self.rd.path / "manifest.json").exists() else {}
            manifest["method_facts"] = previous.get("method_facts", {})
            self.extra.update(read_usage(self.rd.path))  # an LLM run's usage over its sessions (if any)
            self.method.close()
        rows, summary = self.collect(data, plan)
        summary.resumed_from = [describe_build(v) for v in earlier]
        self.write(data, rows, summary, manifest)
        return summary, rows

    def earlier_builds(self, plan: Plan, built: dict[str, Any]) -> list[dict[str, Any]]:
        """The versions of the other cfaug builds (another version, or the same version from other files)
        that finished items this run reuses, oldest first, from the run directory's manifest; [] when every
        reused item was made by this build, or none is reused. A warning names them: a rerun after an
        upgrade or an edit of cfaug writes those rows as the earlier build made them."""
        path = self.rd.path / "manifest.json"
        if not plan.done or not path.exists():
            return []
        previous = self.rd.read_json("manifest.json")  # (a damaged manifest: RunDirError, naming it)
        earlier = [v for v in previous.get("earlier_versions") or [] if isinstance(v, dict)]
        last = previous.get("versions")
        if isinstance(last, dict) and _build(last) != _build(built) and last not in earlier:
            earlier.append(last)
        earlier = [v for v in earlier if _build(v) != _build(built)]
        if earlier:
            reused = sum(1 for it in plan.items if it.key in plan.done)
            self.log(f"warning: {reused} finished work item(s) in {self.rd.path} are reused from another cfaug "
                     f"build ({'; '.join(describe_build(v) for v in earlier)}; this is {describe_build(built)}); "
                     "their rows are written as that build made them: pass --overwrite to make them again")
        return earlier


def _build(v: dict[str, Any]) -> tuple[Any, Any]:
    return v.get("cfaug"), v.get("cfaug_code")


def describe_build(v: dict[str, Any]) -> str:
    """``cfaug 0.1.0 (code sha256:...)`` for a manifest's versions; "code unknown" for a manifest written
    before the code hash was recorded."""
    return f"cfaug {v.get('cfaug') or '?'} (code {v.get('cfaug_code') or 'unknown'})"


def run(source: Any, options: RunOptions, output: str | Path | None = None,
        log: Callable[[str], None] | None = None) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run ``options.method`` over ``source``; returns the summary and the output rows (also written to
    ``output`` when given)."""
    return Runner(source, options, output, log).run()


def _timestamp(t: float) -> str:
    """A wall-clock time as ISO 8601 with microseconds and the local UTC offset."""
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="microseconds")


def _without_userinfo(obj: Any) -> Any:
    """``obj`` with ``user:password@`` removed from every URL in it (what may be written to disk)."""
    if isinstance(obj, dict):
        return {k: _without_userinfo(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_without_userinfo(v) for v in obj]
    if isinstance(obj, str) and "://" in obj and "@" in obj:
        return strip_userinfo(obj)
    return obj


def _writable(folder: Path) -> bool:
    """Whether this process can create a file in ``folder`` (tried, not guessed from permission bits)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _check_writable(path: Path, what: str) -> None:
    """``path`` is (or can be made as) a folder this process can write to; raises :class:`OutputError`."""
    folder = Path(path).expanduser()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{what} cannot be written: {folder} is a file, not a folder")
    if not _writable(folder):
        raise OutputError(f"{what} cannot be written: cannot write to {folder} (permission denied or a "
                          "read-only file system)")


def _make_dirs(path: Path) -> Path | None:
    """Make ``path`` and its missing parents; returns the topmost folder made (None if it existed)."""
    top = None
    p = Path(path)
    while not p.exists() and p != p.parent:
        top, p = p, p.parent
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot make the run directory {path}: {exc.strerror or exc}") from exc
    return top


def _remove_if_empty(rd: RunDir, top: Path, keep_rejects: bool) -> None:
    """Remove a run directory this run made (and the parents it made, up to ``top``) when it holds
    nothing worth keeping: no finished item (nor, with ``keep_rejects``, any rejected row)."""
    for name in (RunDir.RESULTS, "rejects.jsonl") if keep_rejects else (RunDir.RESULTS,):
        f = rd.path / name
        if f.exists() and f.stat().st_size:
            return
    for name in ("config.json", "manifest.json", "summary.json", "rejects.jsonl", RunDir.RESULTS):
        for f in (rd.path / name, rd.path / (name + ".tmp")):
            try:
                f.unlink(missing_ok=True)
            except OSError:
                return
    for folder in (rd.path, *rd.path.parents):
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == top:
            return


def _peak_memory_mb() -> float:
    """Peak resident memory of this process. Linux's VmHWM belongs to this program alone (ru_maxrss also
    counts the parent's memory when a process was forked from a large one)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def unreadable(line: dict[str, Any]) -> bool:
    """Whether a result line is an item the model answered with nothing readable (no counterfactual, its
    ``details`` say ``unreadable``): what ``--retry-failed`` draws again."""
    details = line.get("details")
    return line.get("status") == "no_counterfactual" and isinstance(details, dict) and bool(details.get("unreadable"))
