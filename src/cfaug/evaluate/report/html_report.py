"""Build the HTML report of a run directory: metrics, label distributions, examples with their edits
highlighted (filterable by method and by each generation filter), and what was run.

The page opens with what a reader comes for: a one-line summary (method, rows, counterfactuals, the
method's own flip rate), the metrics and the examples; what was run (counts, parameters, versions) is
folded at the end.

The page is one self-contained file: styles, script and charts are inline, nothing is fetched. All text
from the data is HTML-escaped by the template engine (autoescape), and a Content-Security-Policy lets
only the page's own script (by hash) run, so a review containing ``<script>`` stays text. The one
exception is a line break written as ``<br>``, ``<br/>`` or ``<br />`` (as in IMDB reviews): after
escaping, exactly those escaped forms become ``<br>`` elements (:func:`with_breaks`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.evaluate.pairs import CounterfactualPair, PairSet, is_run_dir, load_pairs
from cfaug.evaluate.report.charts import label_bars
from cfaug.nlp.word_diff import side_by_side, word_diff
from cfaug.nlp.tokens import token_edit_rate

ASSETS = Path(__file__).parent / "assets"
SHOWN_VERSIONS = ("cfaug", "cfaug_code", "python", "platform", "torch", "transformers", "sentence-transformers",
                  "scikit-learn", "numpy")


#: an escaped ``<br>``, ``<br/>`` or ``<br />`` (any case): the only markup from the data the page renders
_ESCAPED_BREAK = re.compile(r"&lt;br\s*/?&gt;", re.IGNORECASE)


def with_breaks(text: str) -> Any:
    """``text`` HTML-escaped, with each ``<br>``, ``<br/>`` or ``<br />`` in it shown as a line break.

    Everything is escaped first, so the only markup that can come out is the ``<br>`` put in here.
    """
    from markupsafe import Markup, escape

    return Markup(_ESCAPED_BREAK.sub("<br>", str(escape(text))))


class ReportError(ValueError):
    """The folder is not a run directory (or lacks what a report needs)."""


@dataclass
class ReportOptions:
    """``max_examples``: how many examples the page lists (chosen evenly across methods and kept /
    rejected candidates, in input order within each)."""

    max_examples: int = 300


def build_report(run_dir: str | os.PathLike[str], options: ReportOptions | None = None) -> str:
    """The report of ``run_dir`` as an HTML string."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from markupsafe import Markup

    options = options or ReportOptions()
    path = Path(run_dir)
    if not is_run_dir(path):
        raise ReportError(f"{path}: not a run directory (expected config.json and results.jsonl, as written "
                          "by 'cfaug augment')")
    pairs = load_pairs(path)
    config = pairs.run_config or {}
    manifest = _read_json(path / "manifest.json")
    summary = _read_json(path / "summary.json") or manifest.get("summary") or {}
    metrics = _read_json(path / "metrics.json")
    script = (ASSETS / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    env = Environment(loader=FileSystemLoader(str(ASSETS)), autoescape=select_autoescape(["j2", "html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["with_breaks"] = with_breaks
    labels = _labels_section(pairs, config, path)
    labels["charts"] = [Markup(c) for c in labels["charts"]]
    return env.get_template("page.html.j2").render(
        run=_run_section(config, manifest, summary, pairs, path), labels=labels,
        metrics=_metrics_section(metrics, pairs), examples=_examples_section(pairs, options.max_examples),
        review=review_section(path, pairs),
        css=Markup((ASSETS / "report.css").read_text(encoding="utf-8")), script=Markup(script),
        script_hash=f"sha256-{digest}", generated=time.strftime("%Y-%m-%d %H:%M:%S %z"),
        cfaug_version=(manifest.get("versions") or {}).get("cfaug", ""), run_dir=str(path))


def write_report(run_dir: str | os.PathLike[str], output: str | os.PathLike[str] | None = None,
                 options: ReportOptions | None = None) -> Path:
    """Write the report (default ``RUN_DIR/report.html``, ``-`` for standard output) and return its path. An
    output inside the run directory other than ``report.html`` is refused
    (:func:`cfaug.run.outputs.check_output`)."""
    from cfaug.run.outputs import check_output, is_stdout, output_lock, write_text_atomic

    out = Path(output) if output else Path(run_dir) / "report.html"
    check_output(output or out, "-o", read_dirs=[("", run_dir)], own_files=("report.html",), file=True, stdout=True)
    with output_lock(None if is_stdout(output) else out):
        write_text_atomic(output if is_stdout(output) else out, build_report(run_dir, options))
    return out


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ReportError(f"{path}: not valid JSON: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _fmt_seconds(s: Any) -> str:
    if not isinstance(s, (int, float)):
        return "unknown"
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def _run_section(config: dict[str, Any], manifest: dict[str, Any], summary: dict[str, Any], pairs: PairSet,
                 path: Path) -> dict[str, Any]:
    task = config.get("task") or {}
    extra = summary.get("extra") or {}
    llm = [(k, v) for k, v in extra.items() if k.startswith("llm")]
    other = [(k, json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v)
             for k, v in extra.items() if not k.startswith("llm")]
    versions = manifest.get("versions") or {}
    counts = [(k.replace("_", " "), summary[k]) for k in (
        "rows_read", "rows_rejected", "items", "items_without_counterfactual", "items_failed",
        "counterfactuals_written", "candidates_filtered_out") if k in summary]
    own_judge = own_judge_figure(summary)
    if own_judge:
        name = summary.get("own_judge")
        counts.append(("flip rate, the method's own judge" + (f" ({name})" if name else ""), own_judge))
    params = [(k, json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v)
              for k, v in (config.get("params") or {}).items()]
    cmd = manifest.get("command")
    return {
        "method": config.get("method", "unknown"), "task": task.get("name", pairs.task.name),
        "target": task.get("target", "opposite"), "input": config.get("input", ""),
        "input_name": Path(str(config.get("input", ""))).name, "input_hash": config.get("input_hash", ""),
        "seed": config.get("seed", ""), "started": manifest.get("started", "unknown"),
        "finished": manifest.get("finished", "not finished"), "seconds": _fmt_seconds(summary.get("seconds")),
        "command": " ".join(cmd) if isinstance(cmd, list) else (cmd or ""), "counts": counts, "params": params,
        "llm": llm, "extra": other, "versions": [(k, versions[k]) for k in SHOWN_VERSIONS if versions.get(k)],
        "facts": json.dumps(manifest.get("method_facts"), indent=2, ensure_ascii=False) if manifest.get("method_facts") else "",
        "counterfactuals": summary.get("counterfactuals_written", sum(p.passed for p in pairs.pairs)),
        "n_items": summary.get("items", "?"), "rows": summary.get("rows_read", summary.get("items", "?")),
        "own_judge": own_judge, "own_judge_name": summary.get("own_judge") or "",
    }


def own_judge_figure(summary: dict[str, Any]) -> str:
    """The method's own flip rate from ``summary.json``, naming the P(target) it counts from and the share
    above 0.5 when the run recorded them: ``45.0% with P(target) ≥ 0.90 (83.3% above 0.5)``. Empty when
    the method has no own judge."""
    rate = summary.get("flip_rate_own_judge")
    if not isinstance(rate, (int, float)):
        return ""
    text = f"{rate:.1%}"
    t = summary.get("own_judge_threshold")
    if isinstance(t, (int, float)):
        text += f" with P(target) \u2265 {t:.2f}" if round(t, 2) == t else f" with P(target) \u2265 {t:g}"
    half = summary.get("own_judge_above_half")
    if isinstance(half, (int, float)):
        text += f" ({half:.1%} " + ("above 0.5)" if isinstance(t, (int, float)) else "with P(target) above 0.5)")
    return text


def _input_labels(config: dict[str, Any], pairs: PairSet, run_dir: Path) -> Counter[str] | None:
    """Labels of the run's input file, when it can still be read."""
    from cfaug.data.io import read_dataset
    from cfaug.data.schema import Schema

    src = config.get("input")
    if not src:
        return None
    if not Path(str(src)).exists():  # a relative path is relative to where the run was started
        src = next((str(base / src) for base in (run_dir.parent, run_dir.parent.parent)
                    if (base / str(src)).exists()), None)
        if src is None:
            return None
    sc = config.get("schema") or {}
    try:
        data = read_dataset(src, pairs.task, Schema(text_cols=dict(sc.get("text_cols") or {}),
                                                    label_col=sc.get("label_col"), id_col=sc.get("id_col")),
                            max_chars=int(config.get("max_chars") or 100_000))
    except Exception:  # noqa: BLE001 - the input may have changed since; fall back to the results
        return None
    records = data.records[: config["limit"]] if config.get("limit") else data.records
    return Counter(r.label for r in records if r.label)


def _labels_section(pairs: PairSet, config: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    labels = list(pairs.task.label_space.labels)
    before = _input_labels(config, pairs, run_dir)
    note = "Original data: the labels of the run's input file."
    if before is None:
        seen: dict[str, str] = {}
        for p in pairs.pairs:
            if p.original_label:
                seen.setdefault(p.source_id, p.original_label)
        before = Counter(seen.values())
        note = ("Original data: the input file could not be read, so these are the originals that have at "
                "least one candidate in the results.")
    cfs = Counter(p.target for p in pairs.pairs if p.passed)
    after = before + cfs
    return {"note": note + " Counterfactuals: kept candidates by target label.", "charts": [
        label_bars("original data", before, labels), label_bars("counterfactuals (kept)", cfs, labels),
        label_bars("original + counterfactuals", after, labels)]}


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.2f}" if abs(v) >= 10 else f"{v:.4f}"
    return str(v)


def _metrics_section(metrics: dict[str, Any], pairs: PairSet) -> dict[str, Any]:
    if metrics.get("groups"):
        note = (f"From metrics.json written by 'cfaug evaluate' ({metrics.get('created', '')}, "
                f"{metrics.get('pairs_scored')} counterfactuals scored). Values are comparable across runs "
                "only when their signatures match.")
        groups = metrics["groups"]
    else:
        note = ("No metrics.json in this run directory, so only model-free metrics are shown (computed now on "
                "the kept counterfactuals); run 'cfaug evaluate RUN_DIR' for flip rate, content preservation "
                "and fluency.")
        groups = _model_free_metrics(pairs)
    names: list[str] = []
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for g, data in groups.items():
        for m in data["metrics"]:
            if m["name"] not in names:
                names.append(m["name"])
            by.setdefault(m["name"], {})[g] = m
    rows = []
    for name in names:
        first = next(iter(by[name].values()))
        rows.append({
            "name": name, "direction": "(higher is better)" if first.get("higher_is_better", True) else "(lower is better)",
            "not_independent": first.get("settings", {}).get("independent") is False,
            "cells": [_fmt(by[name][g]["value"]) if g in by[name] else "" for g in groups],
            "signature": first.get("signature", ""),
            "settings": json.dumps(first.get("settings", {}), indent=1, ensure_ascii=False)})
    return {"note": note, "groups": list(groups), "rows": rows}


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def _coef(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def review_section(run_dir: Path, pairs: PairSet) -> dict[str, Any] | None:
    """The review statistics of the page: decisions per annotator, the human flip rate, the judge's
    precision and recall against people (its verdicts from ``judgements.jsonl``) and the annotators'
    agreement; None when the run has no review decision (the page then has no review section). A review
    store (or a ``judgements.jsonl``) that cannot be read is said in the section instead of failing the
    report."""
    from cfaug.data.io import DataError
    from cfaug.evaluate.human import review_figures
    from cfaug.run.decisions import DECISIONS, StoreError

    try:
        h = review_figures(run_dir, pairs.pairs, stored_judgements=True)
    except (StoreError, DataError) as exc:  # a damaged store, or a damaged judgements.jsonl
        return {"error": str(exc)}
    if h is None:
        return None
    used = [d for d in DECISIONS if h["decisions"]["by_decision"].get(d)]
    counts = [{"annotator": a, "cells": [c.get(d, 0) for d in used], "total": sum(c.values())}
              for a, c in h["decisions"]["by_annotator"].items()]
    counts.append({"annotator": "all", "cells": [h["decisions"]["by_decision"].get(d, 0) for d in used],
                   "total": h["decisions"]["live"]})
    rows, flip, kept = h["rows"], h["flip_rate"], h["kept_rate"]
    figures = [
        ("rows reviewed", f"{rows['reviewed']} of {rows['in_scope']}"
         + (f" ({rows['decisions_on_other_rows']} decisions on rows no longer in the run)"
            if rows["decisions_on_other_rows"] else "")),
        ("human flip rate", f"{_pct(flip['value'])}: {flip['flipped']} of {flip['n']} rows judged flipped"
         + f" ({flip['rejected_only']} rejected for another reason and {flip['ties']} "
           f"tie{'s' if flip['ties'] != 1 else ''} left out)"),
        ("kept (accepted or edited)", f"{_pct(kept['value'])}: {kept['kept']} of {kept['n']} rows"),
    ]
    judge_rows = []
    j = h["judge"]
    if j is not None:
        figures.append((f"judge{' ' + j['name'] if j['name'] else ''} against people",
                        f"precision {_pct(j['precision'])} ({j['true_positive']} of "
                        f"{j['true_positive'] + j['false_positive']} it called flipped), recall {_pct(j['recall'])} "
                        f"({j['true_positive']} of {j['true_positive'] + j['false_negative']} people called flipped), "
                        f"agreement {_pct(j['agreement'])} on {j['n']} rows"
                        + (f"; {j['edited_left_out']} edited rows left out" if j["edited_left_out"] else "")))
        judge_rows = [("judge: flipped", j["true_positive"], j["false_positive"]),
                      ("judge: not flipped", j["false_negative"], j["true_negative"])]
    ag = h.get("agreement")
    if ag:
        parts = ([f"Cohen's kappa {_coef(ag['cohen_kappa'])}"] if len(ag["annotators"]) == 2 else
                 [f"Fleiss' kappa {_coef(ag['fleiss_kappa'])}"])
        parts += [f"Krippendorff's alpha {_coef(ag['krippendorff_alpha'])}",
                  f"observed agreement {_pct(ag['observed'])}"]
        figures.append((f"agreement ({ag['shared_items']} rows decided by several annotators)", ", ".join(parts)))
    methods = [{"method": m or "(unnamed)", "reviewed": g["reviewed"], "flip": _pct(g["flip_rate"]["value"]),
                "flip_n": g["flip_rate"]["n"], "kept": _pct(g["kept_rate"]["value"]),
                "precision": _pct((g["judge"] or {}).get("precision")),
                "recall": _pct((g["judge"] or {}).get("recall"))}
               for m, g in (h.get("by_method") or {}).items()]
    note = (f"From the review store ({h['store']}): {h['decisions']['live']} decisions by "
            f"{len(h['annotators'])} annotator{'s' if len(h['annotators']) != 1 else ''}. {h['mapping']}.")
    if j is None:
        note += (" The judge is compared with people once 'cfaug evaluate RUN_DIR' has run with a judge "
                 "(--judge-train or --judge).")
    return {"error": None, "note": note, "decisions": used, "counts": counts, "figures": figures,
            "judge_rows": judge_rows, "methods": methods, "has_judge": j is not None}


def _model_free_metrics(pairs: PairSet) -> dict[str, Any]:
    from cfaug.evaluate.diversity import distinct_n, self_bleu
    from cfaug.evaluate.flip_rate import own_judge_flip_rate
    from cfaug.evaluate.minimality import edit_rate

    out: dict[str, Any] = {}
    for method in pairs.methods():
        kept = pairs.only(method)
        if not kept:
            continue
        orig, new = [p.original for p in kept], [p.counterfactual for p in kept]
        results = [own_judge_flip_rate(kept), edit_rate(orig, new), self_bleu(new), distinct_n(new, 1),
                   distinct_n(new, 2)]
        out[method or "(unnamed)"] = {"metrics": [r.to_json() for r in results if r.n]}
    return out


def _examples_section(pairs: PairSet, limit: int) -> dict[str, Any]:
    filter_names: list[str] = []
    for p in pairs.pairs:
        for name in (p.meta.get("filters") or {}):
            if name not in filter_names:
                filter_names.append(name)
    chosen = _choose(pairs.pairs, limit)
    rows = []
    for p in chosen:
        left, right = side_by_side(word_diff(p.original, p.counterfactual))
        rows.append({
            "source_id": p.source_id, "method": p.method, "passed": p.passed,
            "variant": p.meta.get("variant") or p.meta.get("proposer") or "",
            "target": pairs.task.label_space.surface(p.target),
            "original_label": pairs.task.label_space.surface(p.original_label) if p.original_label else "?",
            "edit_rate": f"{token_edit_rate(p.original, p.counterfactual):.3f}",
            "judge": _judge_note(p), "left": left, "right": right,
            "filters": [{"index": i, "name": n, "state": _state((p.meta.get("filters") or {}).get(n, None))}
                        for i, n in enumerate(filter_names)]})
    total = len(pairs.pairs)
    note = (f"Showing {len(rows)} of {total} candidates" + (" (chosen evenly across methods and kept / rejected)."
                                                              if len(rows) < total else "."))
    return {"rows": rows, "methods": pairs.methods(), "note": note,
            "filters": [{"index": i, "name": n} for i, n in enumerate(filter_names)]}


def _state(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("passed")
    if value is None:
        return "na"
    return "pass" if value else "fail"


def _judge_note(p: CounterfactualPair) -> str:
    own = p.meta.get("own_judge")
    if isinstance(own, dict) and "target_prob" in own:
        return f"own judge P(target) {own['target_prob']:.2f}"
    return ""


def _choose(pairs: Sequence[CounterfactualPair], limit: int) -> list[CounterfactualPair]:
    """Up to ``limit`` pairs, round-robin over (method, kept) groups, keeping input order in each."""
    if len(pairs) <= limit:
        return list(pairs)
    groups: dict[tuple[str, bool], list[CounterfactualPair]] = {}
    for p in pairs:
        groups.setdefault((p.method, not p.passed), []).append(p)
    queues = [groups[k] for k in sorted(groups)]
    out: list[CounterfactualPair] = []
    i = 0
    while len(out) < limit:
        progressed = False
        for q in queues:
            if i < len(q) and len(out) < limit:
                out.append(q[i])
                progressed = True
        if not progressed:
            break
        i += 1
    order = {id(p): n for n, p in enumerate(pairs)}
    return sorted(out, key=lambda p: order[id(p)])
