"""The runner, in five steps: **read** the input (rejecting bad rows), **plan** the work items and what is
already done, **execute** the pending ones (training or loading the method first, then an engine for batch
methods or the event loop for LLM methods, appending each finished item to the run directory), **collect**
the finished lines in input order, and **write** the output, manifest and summary.

A rerun of a finished run reads, plans and collects: it neither trains nor loads the method.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cfaug.config import ConfigError
from cfaug.data.contract import output_columns
from cfaug.data.fingerprint import hash_source, versions
from cfaug.data.io import DataError, Dataset, read_dataset, write_rows
from cfaug.data.records import WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.errors import CfaugError
from cfaug.methods import build_method
from cfaug.methods.base import Method
from cfaug.run.engines import Job, make_engine
from cfaug.run.options import RunOptions
from cfaug.run.results import result_line
from cfaug.run.rundir import RunDir
from cfaug.run.training import Fitted, fit_or_load, read_model
from cfaug.training.context import StageContext
from cfaug.training.device import resolve_device
from cfaug.training.store import ArtifactStore


@dataclass
class RunSummary:
    """End-of-run figures, printed by the CLI and saved as ``summary.json``."""

    rows_read: int = 0
    rows_rejected: int = 0
    items: int = 0
    items_resumed: int = 0
    items_without_counterfactual: int = 0
    #: why items got no counterfactual, as the method said (reason -> items); filtered candidates not included
    without_reasons: dict[str, int] = field(default_factory=dict)
    items_failed: int = 0
    counterfactuals_written: int = 0
    candidates_filtered_out: int = 0
    flip_rate_own_judge: float | None = None
    own_judge: str | None = None
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    run_dir: str = ""
    output: str | None = None
    rejects_file: str | None = None
    columns: list[str] = field(default_factory=list)  #: the output's columns, in order
    extra: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [
            f"rows read              {self.rows_read}",
            f"rows rejected          {self.rows_rejected}" + (f"  (see {self.rejects_file})" if self.rows_rejected else ""),
            f"work items             {self.items}" + (f"  ({self.items_resumed} already done)" if self.items_resumed else ""),
            f"counterfactuals        {self.counterfactuals_written}",
            f"filtered out           {self.candidates_filtered_out}",
            f"items with none        {self.items_without_counterfactual}",
        ]
        for reason, n in sorted(self.without_reasons.items(), key=lambda kv: -kv[1]):
            out.append(f"  {n:>5}  {reason}")
        if self.items_failed:
            out.append(f"items failed           {self.items_failed}  (errors in results.jsonl)")
        if self.flip_rate_own_judge is not None:
            out.append(f"flip rate ({self.own_judge}, the method's own judge)  {self.flip_rate_own_judge:.1%}")
        for k, v in self.extra.items():
            out.append(f"{k:<22} {v}")
        out.append(f"time                   {self.seconds:.1f} s  (peak memory {self.peak_memory_mb:.0f} MB)")
        out.append(f"run directory          {self.run_dir}")
        if self.output:
            out.append(f"output                 {self.output}")
        return out


@dataclass
class Plan:
    """What a run will do: every work item, the ones still to run, and the lines already finished."""

    items: list[WorkItem]
    pending: list[WorkItem]
    done: dict[str, dict[str, Any]]


def make_task_from(options: RunOptions) -> Task:
    from cfaug.data.tasks import make_task

    levels = options.levels if isinstance(options.levels, tuple) else options.levels_tuple()
    return make_task(options.task, target=options.target, edit_side=options.edit_side, levels=levels)


def make_schema(options: RunOptions) -> Schema:
    text_cols = {role: col for role, col in (("text", options.text_col), ("premise", options.premise_col),
                                              ("hypothesis", options.hypothesis_col)) if col}
    return Schema(text_cols=text_cols, label_col=options.label_col, id_col=options.id_col)


def method_for(options: RunOptions) -> tuple[Method, dict[str, Any], dict[str, Any] | None]:
    """The configured method, the parameters it was built with, and the model folder's description; with
    ``--model``, the method and its training parameters come from the model folder (a parameter given
    again must agree with it)."""
    from cfaug.methods import METHODS, method_params

    if not options.model:
        name = options.method or "auto-cad"
        params = method_params(name, options.params, options.preset)
        return build_method(name, params, options.seed), params, None
    info = read_model(options.model)
    if options.method and METHODS.resolve(options.method) != info.method:
        raise ConfigError(f"--model {options.model} was trained for {info.method}, not {options.method}")
    given = method_params(info.method, options.params, options.preset) if options.preset != "default" \
        else dict(options.params)
    clash = {k for k, v in given.items() if k in info.fit_params and str(v) != str(info.fit_params[k])}
    if clash:
        raise ConfigError(f"--model {options.model} was trained with other values of {', '.join(sorted(clash))}; "
                          "train a new model or drop those parameters (or the preset)")
    params = {**info.fit_params, **given}
    return build_method(info.method, params, options.seed), params, asdict(info)


class Runner:
    """One run of a method over a source; see the module docstring for its steps."""

    def __init__(self, source: Any, options: RunOptions, output: str | Path | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.source, self.options, self.output = source, options, output
        self.log = log or (lambda msg: print(msg, file=sys.stderr))
        self.start = time.perf_counter()
        self.task = make_task_from(options)
        self.schema = make_schema(options)
        self.method, self.params, self.model_info = method_for(options)
        if not options.run_dir:
            raise ConfigError("a run needs a run directory")
        self.rd = RunDir(options.run_dir)
        self.facts: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}

    # -- 1. read ---------------------------------------------------------------------------------------
    def read(self) -> Dataset:
        o = self.options
        data = read_dataset(self.source, self.task, self.schema, fmt=o.input_format, max_chars=o.max_chars)
        config = {
            "method": self.method.name,
            "params": self.method.identity_params(),
            "task": {"name": self.task.name, "target": self.task.target, "edit_roles": list(self.task.edit_roles)},
            "schema": asdict(data.schema),
            "seed": o.seed,
            "input": data.source,
            "input_hash": hash_source(self.source),
            "max_chars": o.max_chars,
            "limit": o.limit,
            "train_data": o.train_data and {"path": str(o.train_data), "hash": hash_source(o.train_data)},
            "model": self.model_info and {"path": str(o.model), "fingerprint": self.model_info["fingerprint"]},
        }
        self.config = config
        self.out_schema = data.schema  # the columns as found in this input
        from cfaug.config import describe_params

        self.rd.open(config, overwrite=o.overwrite,
                     param_defaults={p.name: p.default for p in describe_params(type(self.method.config))})
        self.rd.write_lines("rejects.jsonl", (r.to_json() for r in data.rejects))
        for r in data.rejects[:20]:
            self.log(f"rejected: {r.message()}")
        if len(data.rejects) > 20:
            self.log(f"... and {len(data.rejects) - 20} more rejected rows (see {self.rd.path / 'rejects.jsonl'})")
        if not data.records:
            raise DataError(f"{data.source}: no usable rows; all {data.rows_read} were rejected "
                            f"(see {self.rd.path / 'rejects.jsonl'})")
        return data

    # -- 2. plan ---------------------------------------------------------------------------------------
    def plan(self, data: Dataset) -> Plan:
        o = self.options
        records = data.records[: o.limit] if o.limit else data.records
        items = [WorkItem(r, t) for r in records for t in self.task.targets(r)]
        done = self.rd.finished()
        pending = [it for it in items if it.key not in done
                   or (o.retry_failed and done[it.key].get("status") == "error")]
        return Plan(items, pending, done)

    # -- 3. execute ------------------------------------------------------------------------------------
    def execute(self, data: Dataset, plan: Plan) -> None:
        """Train or load the method, then run the pending items, appending each finished line."""
        o = self.options
        ctx = StageContext(device=resolve_device(o.device), seed=o.seed, progress=o.progress, log=self.log,
                           concurrency=o.concurrency)
        records = data.records[: o.limit] if o.limit else data.records
        self.facts.update(self.method.prepare(records, self.task, ctx) or {})
        fitted = self.fit(data, ctx) if self.method.trains else None
        if fitted is not None:
            self.facts["training"] = fitted.facts()
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
        def finish(item: WorkItem, cfs: Any, error: str | None = None, details: dict[str, Any] | None = None) -> None:
            on_line(result_line(item, cfs, self.out_schema, self.task, error=error, details=details))

        try:
            asyncio.run(_run_async(self.method, pending, self.task, finish, self.options.concurrency or 16))
        except CfaugError as exc:  # a clean stop (budget spent, LLM unreachable) keeps results
            if not exc.clean_stop:
                raise
            self.extra["stopped"] = f"{type(exc).__name__}: {exc}"
            self.log(f"stopped early: {self.extra['stopped']}; rerun the same command to resume")

    # -- 4. collect and 5. write -----------------------------------------------------------------------
    def collect(self, data: Dataset, plan: Plan) -> tuple[list[dict[str, Any]], RunSummary]:
        rows, summary = _collect(plan.items, plan.done, self.options.keep_failed)
        summary.rows_read = data.rows_read
        summary.rows_rejected = len(data.rejects)
        summary.items_resumed = len(plan.items) - len(plan.pending)
        summary.run_dir = str(self.rd.path)
        summary.rejects_file = str(self.rd.path / "rejects.jsonl")
        summary.extra = self.extra
        summary.columns = output_columns(data.schema, data.extra_columns)
        return rows, summary

    def write(self, data: Dataset, rows: list[dict[str, Any]], summary: RunSummary, manifest: dict[str, Any]) -> None:
        if self.output is not None:
            write_rows(rows, self.output, self.options.output_format, columns=summary.columns)
            summary.output = str(self.output)
        summary.seconds = time.perf_counter() - self.start
        summary.peak_memory_mb = _peak_memory_mb()
        manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        manifest["summary"] = asdict(summary)
        self.rd.write_json("manifest.json", manifest)
        self.rd.write_json("summary.json", asdict(summary))

    def run(self) -> tuple[RunSummary, list[dict[str, Any]]]:
        data = self.read()
        plan = self.plan(data)
        manifest: dict[str, Any] = {
            "versions": versions(), "seed": self.options.seed, "input": data.source,
            "input_hash": self.config["input_hash"], "method": self.method.name, "command": sys.argv,
            "options": {k: v for k, v in asdict(self.options).items() if k != "params"},
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        if plan.pending:
            self.rd.write_json("manifest.json", {**manifest, "method_facts": {}})
            self.execute(data, plan)
            manifest["method_facts"] = self.facts
        else:
            previous = self.rd.read_json("manifest.json") if (self.rd.path / "manifest.json").exists() else {}
            manifest["method_facts"] = previous.get("method_facts", {})
            self.method.close()
        rows, summary = self.collect(data, plan)
        self.write(data, rows, summary, manifest)
        return summary, rows


def run(source: Any, options: RunOptions, output: str | Path | None = None,
        log: Callable[[str], None] | None = None) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run ``options.method`` over ``source``; returns the summary and the output rows (also written to
    ``output`` when given)."""
    return Runner(source, options, output, log).run()


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


def _aborts(exc: BaseException) -> bool:
    """Errors that stop the whole run instead of failing one item."""
    return isinstance(exc, ConfigError) or (isinstance(exc, CfaugError) and exc.aborts_run)


async def _run_async(method: Method, pending: Sequence[WorkItem], task: Task, finish: Callable[..., None],
                     concurrency: int) -> None:
    """Run ``agenerate`` concurrently; the method's LLM layer bounds real concurrency, the window here
    only bounds how many coroutines exist at once."""
    window = max(1, concurrency * 2)

    async def one(item: WorkItem) -> None:
        try:
            res = await method.agenerate(item, task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            if _aborts(exc):
                raise
            finish(item, None, f"{type(exc).__name__}: {exc}", getattr(exc, "details", None))
            return
        finish(item, res)

    running: set[asyncio.Task[None]] = set()
    try:
        for item in pending:
            running.add(asyncio.ensure_future(one(item)))
            if len(running) >= window:
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                _raise_first(finished)
        while running:
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            _raise_first(finished)
    finally:
        for t in running:
            t.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        await method.aclose()


def _raise_first(finished: set[asyncio.Task[None]]) -> None:
    """Re-raise the first error among finished tasks, after collecting every error (an uncollected one
    is logged later, at garbage collection, as "Task exception was never retrieved")."""
    errors = [exc for t in finished if (exc := t.exception()) is not None]
    if errors:
        raise errors[0]


def _collect(items: Sequence[WorkItem], done: dict[str, dict[str, Any]], keep_failed: bool) -> tuple[list[dict[str, Any]], RunSummary]:
    rows: list[dict[str, Any]] = []
    s = RunSummary(items=len(items))
    judged = flipped = 0
    for it in items:
        line = done.get(it.key)
        if line is None:
            continue
        if line["status"] == "error":
            s.items_failed += 1
            continue
        if line["status"] == "no_counterfactual":
            s.items_without_counterfactual += 1
            if line.get("reason"):
                s.without_reasons[line["reason"]] = s.without_reasons.get(line["reason"], 0) + 1
        for row in line["counterfactuals"]:
            meta = row.get("meta") or {}
            passed = meta.get("passed", True)
            if not passed:
                s.candidates_filtered_out += 1
            if passed or keep_failed:
                rows.append(row)
            own = meta.get("own_judge")
            if passed and isinstance(own, dict) and "flipped" in own:
                judged += 1
                flipped += bool(own["flipped"])
                s.own_judge = own.get("name", s.own_judge)
    s.counterfactuals_written = len(rows)
    s.flip_rate_own_judge = flipped / judged if judged else None
    return rows, s
