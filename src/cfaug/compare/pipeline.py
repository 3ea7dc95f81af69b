"""``cfaug compare`` from start to end: check what was asked, sample the rows, run every method into its
own run directory, score them all with one judge, train downstream when test sets are given, and write
``compare.json``, ``summary.json`` and ``summary.md`` (the report is written from them by
:func:`cfaug.compare.report.write_report`)."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError

COMPARE_FILE = "compare.json"
DATA_COPY = "data.jsonl"

#: exit codes of ``cfaug compare`` (see :func:`exit_code`)
EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_STOPPED = 3
EXIT_FAILED = 4


@dataclass
class CompareOptions:
    """Everything a comparison is asked (the ``cfaug compare`` flags; the keyword arguments of
    :func:`cfaug.compare`)."""

    methods: list[str]
    output: str
    #: run options shared by every method (:class:`cfaug.run.options.RunOptions` names: ``task``,
    #: ``text_col``, ``label_col``, ``label_map``, ``preset``, ``train_data``, ``device``...)
    run: dict[str, Any] = field(default_factory=dict)
    #: method parameters given to every method that declares them (``-p KEY=VALUE``; ``llm``: the LLM settings)
    params: dict[str, Any] = field(default_factory=dict)
    #: method parameters of one method (``-p METHOD:KEY=VALUE``)
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    limit: int | None = None
    seed: int = 0
    judge: str | None = None
    judge_labels: list[str] | None = None
    judge_train: str | None = None
    judge_model: str = "logreg"
    judge_text_col: str | None = None
    judge_label_col: str | None = None
    test: str | None = None
    challenge: list[tuple[str, str]] = field(default_factory=list)
    out_of_domain: list[tuple[str, str]] = field(default_factory=list)
    reference: list[tuple[str, str]] = field(default_factory=list)
    dev: str | None = None
    classifier: str = "tfidf-svm"
    classifier_params: dict[str, Any] = field(default_factory=dict)
    downstream_seeds: int = 3
    budget: float | None = None
    #: :class:`cfaug.evaluate.suite.EvaluationConfig` settings (``embedding``, ``bertscore``, ``encoder``,
    #: ``token_encoder``, ``lm``, ``ngram_reference``, ``precision``...)
    evaluation: dict[str, Any] = field(default_factory=dict)
    progress: bool = True


@dataclass
class CompareResult:
    """The summary written, where the files are, and the exit code the command gives."""

    summary: dict[str, Any]
    out_dir: Path
    exit_code: int
    files: dict[str, str] = field(default_factory=dict)


def exit_code(entries: list[dict[str, Any]]) -> int:
    """0: every method finished or was skipped for want of what it needs (and at least one finished);
    3: some method stopped early (LLM server unreachable, budget spent; rerun to resume); 4: some method
    failed, or none finished."""
    statuses = [e["status"] for e in entries]
    if any(e.get("stopped") for e in entries):
        return EXIT_STOPPED
    if "failed" in statuses or "ok" not in statuses:
        return EXIT_FAILED
    return EXIT_OK


def _named(values: Any, what: str) -> list[tuple[str, str]]:
    """NAME=FILE pairs from a list of strings / (name, path) pairs, or a mapping."""
    if values is None:
        return []
    if isinstance(values, dict):
        return [(str(k), str(v)) for k, v in values.items()]
    if isinstance(values, (str, Path)):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, (tuple, list)) and len(v) == 2:
            out.append((str(v[0]), str(v[1])))
        elif isinstance(v, str) and "=" in v:
            name, path = v.split("=", 1)
            out.append((name.strip(), path))
        else:
            raise ConfigError(f"{what} expects NAME=FILE, got {v!r}")
    return out


def check(opts: CompareOptions) -> None:
    """Problems with the options that need no data (raised as :class:`ConfigError`)."""
    if not opts.methods:
        raise ConfigError("name the methods to compare: --methods auto-cad,coba,...")
    if opts.judge and opts.judge_train:
        raise ConfigError("name one flip-rate judge: --judge DIR or --judge-train FILE, not both")
    if opts.limit is not None and opts.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {opts.limit}")
    if opts.downstream_seeds < 1:
        raise ConfigError(f"--downstream-seeds must be at least 1, got {opts.downstream_seeds}")
    from cfaug.run.options import MAX_SEED

    if opts.seed < 0:
        raise ConfigError(f"--seed: {opts.seed} is below the minimum 0")
    if opts.seed > MAX_SEED:
        raise ConfigError(f"--seed: {opts.seed} is above the maximum {MAX_SEED}")
    if opts.seed + opts.downstream_seeds - 1 > MAX_SEED:  # (the downstream seeds are --seed, --seed+1, ...)
        raise ConfigError(f"--seed {opts.seed} leaves no room for --downstream-seeds {opts.downstream_seeds}: the "
                          f"last one would be above the maximum seed {MAX_SEED}")
    if opts.budget is not None and opts.budget < 0:
        raise ConfigError(f"--budget must not be negative, got {opts.budget}")
    if opts.judge_model not in ("logreg", "svm"):
        raise ConfigError(f"--judge-model must be logreg or svm, got {opts.judge_model!r}")
    extra = [flag for flag, v in (("--challenge", opts.challenge), ("--out-of-domain", opts.out_of_domain),
                                  ("--reference", opts.reference), ("--dev", opts.dev)) if v]
    if extra and not opts.test:
        raise ConfigError(f"{', '.join(extra)} go(es) with --test FILE (the downstream comparison)")
    names = ["test"] + [n for n, _ in opts.challenge + opts.out_of_domain]
    if len(set(names)) != len(names):
        raise ConfigError(f"test set names must differ from each other and from 'test', got {names}")
    refs = [n for n, _ in opts.reference]
    clash = set(refs) & {m.strip() for m in opts.methods} | ({"originals"} & set(refs))
    if len(set(refs)) != len(refs) or clash:
        raise ConfigError(f"--reference names must be unique and differ from the method names, got {refs}")
    for flag, path in [("--test", opts.test), ("--dev", opts.dev), ("--judge-train", opts.judge_train),
                       *(("--challenge", p) for _, p in opts.challenge),
                       *(("--out-of-domain", p) for _, p in opts.out_of_domain),
                       *(("--reference", p) for _, p in opts.reference)]:
        if path and not Path(path).exists():
            raise FileNotFoundError(f"{flag} {path}: no such file or folder")


def _as_path(data: Any, out_dir: Path) -> tuple[str, bool]:
    """A path for ``data``: itself when it is one, else its rows written to ``out_dir/data.jsonl``."""
    if isinstance(data, (str, Path)):
        return str(data), False
    from cfaug.data.io.sources import open_rows

    _, _, it = open_rows(data, None)
    from cfaug.run.outputs import atomic_open

    path = out_dir / DATA_COPY
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for _, row in it:
            if isinstance(row, dict):
                fh.write(json.dumps(row, ensure_ascii=False, default=lambda v: v.item() if hasattr(v, "item")
                                    else str(v)) + "\n")
    return str(path), True


def check_outputs(data: Any, opts: CompareOptions, inputs: list[tuple[str, Any]] | None = None) -> None:
    """Refuse a comparison folder whose files would overwrite something the comparison reads (see
    :mod:`cfaug.run.outputs`): the folder must not be an input, and no input may be one of the files it
    writes there or lie in its ``runs/`` or ``scores/``. ``inputs``: more (flag, path) pairs to check
    (``--config``)."""
    from cfaug.compare.downstream import DOWNSTREAM_FILE
    from cfaug.compare.runs import RUNS
    from cfaug.compare.sample import SAMPLE_FILE
    from cfaug.compare.scoring import SCORES
    from cfaug.compare.summary import SUMMARY_JSON, SUMMARY_MD
    from cfaug.run.outputs import check_output, param_inputs

    every = [("", data), ("--test", opts.test), ("--dev", opts.dev), ("--judge-train", opts.judge_train),
             ("--judge", opts.judge), *(("--challenge", p) for _, p in opts.challenge),
             *(("--out-of-domain", p) for _, p in opts.out_of_domain), *(("--reference", p) for _, p in opts.reference),
             *((f"--{k.replace('_', '-')}", opts.run.get(k)) for k in ("train_data", "model")),
             *param_inputs(opts.params), *(x for ps in opts.method_params.values() for x in param_inputs(ps)),
             *(inputs or [])]
    out_dir = Path(opts.output).expanduser()
    check_output(opts.output, "-o", inputs=every)
    for name in (COMPARE_FILE, DATA_COPY, SAMPLE_FILE, DOWNSTREAM_FILE, SUMMARY_JSON, SUMMARY_MD, "report.html"):
        check_output(out_dir / name, "-o", inputs=every)
    for name in (RUNS, SCORES):
        check_output(out_dir / name, "-o", inputs=every, folder=True)


def run_compare(data: Any, opts: CompareOptions, log: Callable[[str], None] | None = None) -> CompareResult:
    """Run the comparison (see the module docstring). Bad options or unreadable input raise (a
    :class:`ConfigError`, :class:`~cfaug.data.io.DataError`, ...) before any method runs; a method's own
    failure is recorded in the summary and never raised. An output folder whose files would overwrite an
    input is refused (:func:`check_outputs`), and the folder is locked while the comparison runs
    (:func:`cfaug.run.outputs.output_lock`)."""
    from cfaug.run.outputs import output_lock

    check_outputs(data, opts)
    with output_lock(Path(opts.output).expanduser()):
        return _run_compare(data, opts, log)


def _run_compare(data: Any, opts: CompareOptions, log: Callable[[str], None] | None = None) -> CompareResult:
    from cfaug.compare.downstream import (
        DEFAULT_CLASSIFIER,
        method_figures,
        run_compare_downstream,
    )
    from cfaug.compare.runs import (
        OUTPUT_FILE,
        method_names,
        params_for,
        run_key,
        run_method,
        unknown_shared_params,
        without_counterfactual,
    )
    from cfaug.compare.sample import read_input, write_sample
    from cfaug.compare.scoring import DEFINITIONS, JudgeSpec, row_outcomes, score_methods
    from cfaug.compare.summary import build_summary, write_summary
    from cfaug.data.fingerprint import hash_source
    from cfaug.evaluate.suite import EvaluationConfig
    from cfaug.run.options import RunOptions
    from cfaug.run.runner import make_schema, make_task_from

    log = log or (lambda m: print(m, file=sys.stderr))
    start = time.perf_counter()
    check(opts)
    names = method_names(opts.methods)  # an unknown method raises RegistryError
    unknown = unknown_shared_params([r for _, r in names], opts.params)
    if unknown:
        raise ConfigError(f"no compared method has the parameter(s) {', '.join(unknown)} (see 'cfaug methods -v'; "
                          "-p METHOD:KEY=VALUE sets one method's parameter)")
    from cfaug.methods import METHODS

    for scoped in opts.method_params:  # parameters of a method not compared this time are kept for later
        if scoped not in METHODS:
            raise ConfigError(f"-p {scoped}:KEY=VALUE: unknown method {scoped!r} (see 'cfaug methods')")
    run_fields = {f.name for f in dataclasses.fields(RunOptions)}
    bad = sorted(set(opts.run) - run_fields)
    if bad:
        raise ConfigError(f"unknown run option(s): {', '.join(bad)}")
    base = {k: v for k, v in opts.run.items() if v is not None and k not in ("method", "params", "limit", "run_dir")}
    base["seed"] = opts.seed
    ro = RunOptions.from_mapping(base)
    try:
        evaluation = EvaluationConfig(**opts.evaluation)
    except TypeError as exc:
        raise ConfigError(f"evaluation settings: {exc}") from None
    task = make_task_from(ro)
    schema = make_schema(ro, task)
    out_dir = Path(opts.output).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"-o {out_dir}: a file, not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    data_path, copied = _as_path(data, out_dir)
    dataset = read_input(data_path, task, schema, fmt=ro.input_format, max_chars=ro.max_chars)
    if not dataset.records:
        from cfaug.data.io import DataError

        first = dataset.rejects[0].message() if dataset.rejects else ""
        raise DataError(f"{data_path}: no usable rows; all {dataset.rows_read} were rejected (first: {first})")
    sample = write_sample(data_path, dataset, out_dir, opts.limit, opts.seed, fmt=ro.input_format,
                          balanced=bool(task.label_space.labels))
    sample_sha = hash_source(sample.path)
    data_sha = hash_source(data_path)
    log(f"rows taken {sample.rows_taken} from {data_path}: {sample.path}")
    judge = JudgeSpec(path=opts.judge, labels=opts.judge_labels, train_data=opts.judge_train, model=opts.judge_model,
                      text_col=opts.judge_text_col, label_col=opts.judge_label_col, seed=opts.seed)
    tests = ([("test", opts.test, "in-domain")] if opts.test else []) + \
        [(n, p, "challenge") for n, p in opts.challenge] + [(n, p, "out-of-domain") for n, p in opts.out_of_domain]
    seeds = [opts.seed + k for k in range(opts.downstream_seeds)]
    sets = None
    if tests:  # read before any method runs: a bad test set is a bad option
        from cfaug.compare.downstream import load_sets

        text_col = dataset.schema.text_cols.get(task.roles[0]) if len(task.roles) == 1 else None
        sets = load_sets(task, tests, opts.reference, opts.dev, text_col, dataset.schema.label_col, log)
    asked = {
        "version": 1, "data": str(data_path), "data_sha256": data_sha, "data_copied_from_memory": copied,
        "task": task.name, "columns": dataset.schema.to_config(), "methods": [n for n, _ in names],
        "registered": {n: r for n, r in names}, "limit": opts.limit, "seed": opts.seed,
        "judge": {"kind": judge.kind, "path": opts.judge, "train_data": opts.judge_train, "model": opts.judge_model},
        "tests": [{"name": n, "path": p, "kind": k} for n, p, k in tests],
        "reference": [{"name": n, "path": p} for n, p in opts.reference], "dev": opts.dev,
        "classifier": opts.classifier or DEFAULT_CLASSIFIER, "downstream_seeds": seeds, "budget": opts.budget,
        "params": _redacted(opts.params), "method_params": _redacted(opts.method_params),
        "run_options": {k: v for k, v in base.items() if k != "seed"},
        "evaluation": dataclasses.asdict(evaluation), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    from cfaug.run.outputs import write_text_atomic

    write_text_atomic(out_dir / COMPARE_FILE, json.dumps(asked, indent=2, default=str) + "\n")

    # -- run every method ----------------------------------------------------------------------------
    run_base = {k: v for k, v in base.items() if k != "input_format"}
    run_base["progress"] = opts.progress
    train_sha = None
    if ro.train_data:
        train_sha = hash_source(ro.train_data)
    elif sample.sampled and not ro.input_format:
        run_base["train_data"] = str(Path(data_path).resolve())  # as augment's --limit: training is not limited
        train_sha = data_sha
    runs = []
    for name, registered in names:
        options = {**run_base, "method": registered,
                   "params": params_for(registered, opts.params, opts.method_params, name, ro.preset)}
        key = run_key(registered, options, sample_sha, train_sha)
        max_budget = None
        if opts.budget is not None:
            others = sum(r.llm["cost_usd"] or 0.0 for r in runs if r.llm)
            others += _spent_elsewhere(out_dir, [n for n, _ in names], name, {r.method for r in runs})
            max_budget = opts.budget - others
        runs.append(run_method(name, registered, out_dir, sample.path, options, key, log, max_budget))

    # -- score ---------------------------------------------------------------------------------------
    ok = {r.method: out_dir / r.run_dir for r in runs if r.ok and r.run_dir is not None}
    scores, judge_info = score_methods(out_dir, ok, task, sample.records, sample_sha, judge, evaluation,
                                       data_sha, log, progress=opts.progress) if ok else ({}, {"kind": judge.kind})

    # -- downstream ----------------------------------------------------------------------------------
    downstream = None
    if sets is not None:
        from cfaug.compare.scoring import method_pairs

        ids = {r.id for r in sample.records}
        pairs = {m: ([p for p in method_pairs(d, m, task) if p.source_id in ids], hash_source(d / OUTPUT_FILE))
                 for m, d in ok.items()}
        test_sets, ref_sets, dev_set = sets
        downstream = run_compare_downstream(
            out_dir, sample.records, sample.path, sample_sha, task, pairs, ref_sets, test_sets, dev_set,
            opts.classifier or DEFAULT_CLASSIFIER, opts.classifier_params, seeds, opts.seed, log)

    # -- summary -------------------------------------------------------------------------------------
    entries = []
    for r in runs:
        s = scores.get(r.method)
        run_dir_exists = r.run_dir is not None and (out_dir / r.run_dir).is_dir()
        output_exists = r.output is not None and (out_dir / r.output).exists()
        none, reasons = without_counterfactual(out_dir / r.run_dir) if r.ok and run_dir_exists else (None, None)
        entry: dict[str, Any] = {
            "method": r.method, "registered": r.registered, "status": r.status, "reason": r.reason,
            "rows": len(sample.records),
            "counterfactuals": s.counterfactuals if s else (0 if r.ok else None),
            "coverage": s.coverage if s else None, "flipped_coverage": s.flipped_coverage if s else None,
            "flip_rate": s.flip_rate if s else None, "edit_rate": s.edit_rate if s else None,
            "minimality": s.minimality if s else None, "similarity": s.similarity if s else None,
            "similarity_metric": s.similarity_metric if s else None, "fluency": s.fluency if s else None,
            "diversity": s.diversity if s else None, "h": s.h if s else None,
            "seconds": r.seconds, "llm": r.llm,
            "downstream": method_figures(downstream, r.method),
            "items_failed": r.summary.get("items_failed") if r.summary else None,
            "items_without_counterfactual": none, "without_reasons": reasons,
            "reused": r.reused, "stopped": r.stopped,
            "run_dir": str(r.run_dir) if run_dir_exists else None,
            "output": str(r.output) if output_exists else None,
            "scores": f"scores/{r.method}.json" if s else None,
        }
        entries.append(entry)
    references = [{"method": n, "status": "reference", "reason": None, "path": p,
                   "downstream": method_figures(downstream, n)} for n, p in opts.reference]
    data_info = {"path": str(data_path), "sha256": data_sha, "task": task.name,
                 "columns": dataset.schema.describe(), **sample.describe(), "seed": opts.seed, "limit": opts.limit}
    ds_summary = None
    if downstream:
        ds_summary = {k: downstream[k] for k in ("classifier", "seeds", "seeds_note", "paired_tests", "methods")}
        ds_summary["tests"] = {t: {"kind": v.get("kind"), "rows": v.get("rows"), "source": v.get("source")}
                               for t, v in downstream["tests"].items()}
        ds_summary["originals"] = {t: v["mean"] for t, v in downstream["accuracy"]["originals"].items()}
        ds_summary["dev"] = downstream["dev"].get("source")
        ds_summary["selection"] = downstream.get("selection") or {}
        ds_summary["warnings"] = downstream.get("warnings") or []
        ds_summary["file"] = "downstream.json"
    evaluation_info = {"settings": dataclasses.asdict(evaluation), "definitions": DEFINITIONS}
    outcomes = {name: rows for name in scores if (rows := row_outcomes(out_dir, name)) is not None}
    summary = build_summary(entries, references, judge_info, data_info, ds_summary, evaluation_info, outcomes)
    summary["seconds"] = round(time.perf_counter() - start, 2)
    j, m = write_summary(out_dir, summary)
    files = {"summary": str(j), "table": str(m), "compare": str(out_dir / COMPARE_FILE),
             "sample": str(sample.path)}
    if downstream:
        files["downstream"] = str(out_dir / "downstream.json")
    return CompareResult(summary, out_dir, exit_code(entries), files)


def _spent_elsewhere(out_dir: Path, all_names: list[str], current: str, counted: set[str]) -> float:
    """What the methods not yet run in this session spent in earlier sessions (their ledgers)."""
    from cfaug.compare.runs import RUNS, llm_figures

    total = 0.0
    for n in all_names:
        if n == current or n in counted:
            continue
        figs = llm_figures(out_dir / RUNS / n) if (out_dir / RUNS / n).is_dir() else None
        total += (figs or {}).get("cost_usd") or 0.0
    return total


def _redacted(obj: Any) -> Any:
    """``obj`` with ``user:password@`` removed from URLs (what is written to compare.json)."""
    from cfaug.llm.redact import strip_userinfo

    if isinstance(obj, dict):
        return {k: _redacted(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_redacted(v) for v in obj]
    if isinstance(obj, str) and "://" in obj and "@" in obj:
        return strip_userinfo(obj)
    return obj


def write_report(out_dir: Path, log: Callable[[str], None]) -> Path | None:
    """``DIR/report.html`` (:func:`cfaug.compare.report.write_report`); None, with a log line, when it
    could not be written."""
    try:
        from cfaug.compare.report import write_report as write
    except ModuleNotFoundError as exc:  # pragma: no cover - the report module ships with the package
        log(f"report not written: {exc}")
        return None
    try:
        return write(out_dir)
    except Exception as exc:  # noqa: BLE001 - the summary stands without the report
        log(f"report not written: {type(exc).__name__}: {exc}")
        return None


def summary_frame(summary: dict[str, Any]) -> Any:
    """The summary's method entries as a pandas DataFrame, one row per method (ranked order, references
    last); nested figures flattened: ``llm_requests``, ``llm_input_tokens``, ``llm_output_tokens``,
    ``llm_cost_usd``, ``fluency`` (its value) and ``fluency_originals``, each rate's 95% interval as
    ``<rate>_lo`` and ``<rate>_hi`` (``coverage``, ``flipped_coverage``, ``flip_rate``), and per test set
    ``gain_<set>``, ``gain_<set>_lo``, ``gain_<set>_hi``, ``accuracy_<set>``."""
    import pandas as pd

    from cfaug.compare.intervals import RATES

    rows = []
    for e in summary["methods"]:
        row = {k: v for k, v in e.items() if k not in ("llm", "fluency", "downstream")}
        for rate in RATES:
            ci = row.pop(f"{rate}_ci", None)
            ok = isinstance(ci, (list, tuple)) and len(ci) == 2
            row[f"{rate}_lo"], row[f"{rate}_hi"] = ci if ok else (None, None)
        llm = e.get("llm") or {}
        for k in ("requests", "input_tokens", "output_tokens", "cost_usd"):
            row[f"llm_{k}"] = llm.get(k)
        flu = e.get("fluency") or {}
        row["fluency"] = flu.get("value")
        row["fluency_originals"] = flu.get("originals")
        for t, d in (e.get("downstream") or {}).items():
            row[f"accuracy_{t}"] = d["accuracy"]
            row[f"gain_{t}"] = d["gain"]
            row[f"gain_{t}_lo"], row[f"gain_{t}_hi"] = d["ci95"]
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["ranking_rule"] = summary.get("ranking_rule")
    frame.attrs["judge"] = summary.get("judge")
    return frame


#: the ``llm_*`` keyword arguments of :func:`cfaug.compare` and their key in the ``llm`` parameter
LLM_KEYS = {"llm_backend": "backend", "llm_base_url": "base_url", "llm_model": "model", "llm_api": "api",
            "llm_api_key_env": "api_key_env", "llm_device": "device", "llm_batch_size": "batch_size",
            "cache_dir": "cache_dir", "price_table": "price_table", "rpm": "rpm", "tpm": "tpm",
            "request_timeout": "request_timeout", "max_retries": "max_retries"}
#: the evaluation settings :func:`cfaug.compare` takes as keyword arguments
EVALUATION_KEYS = ("embedding", "encoder", "bertscore", "token_encoder", "mover_encoder", "lm", "lm_add_bos",
                   "ngram_reference", "ngram_order", "precision", "token_window")


def options_from_mapping(methods: Any, output: Any, options: dict[str, Any]) -> CompareOptions:
    """:class:`CompareOptions` from the keyword arguments of :func:`cfaug.compare`: its own fields, any run
    option (``text_col``, ``label_col``, ``task``...), the ``llm_*`` settings (see :data:`LLM_KEYS`) and the
    evaluation settings (:data:`EVALUATION_KEYS`); an unknown name raises :class:`ConfigError`."""
    from cfaug.run.options import RunOptions

    if isinstance(methods, str):
        methods = [m for m in methods.split(",") if m.strip()]
    own = {f.name for f in dataclasses.fields(CompareOptions)} - {"methods", "output", "run"}
    run_fields = {f.name for f in dataclasses.fields(RunOptions)} - {"method", "params", "limit", "seed",
                                                                      "progress", "run_dir"}
    values: dict[str, Any] = {"run": {}, "evaluation": dict(options.pop("evaluation", None) or {})}
    params = dict(options.pop("params", None) or {})
    llm = dict(params.get("llm") or {})
    llm.update(options.pop("llm", None) or {})
    for key, value in options.items():
        if value is None:
            continue
        if key in LLM_KEYS:
            llm[LLM_KEYS[key]] = value
        elif key in EVALUATION_KEYS:
            values["evaluation"][key] = value
        elif key in own:
            values[key] = value
        elif key in run_fields:
            values["run"][key] = value
        else:
            raise ConfigError(f"cfaug.compare: unknown option {key!r}")
    if llm:
        params["llm"] = llm
    for key in ("challenge", "out_of_domain", "reference"):
        if key in values:
            values[key] = _named(values[key], key)
    if "judge_labels" in values and isinstance(values["judge_labels"], str):
        values["judge_labels"] = values["judge_labels"].split(",")
    return CompareOptions(methods=list(methods or []), output=str(output), params=params, **values)
