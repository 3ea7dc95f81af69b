"""The HTML report of a comparison directory: the methods ranked, the trade-off between flip rate and edit
rate, downstream gains with their intervals, cost and time, and the same source texts rewritten by every
method side by side.

It reads ``DIR/summary.json`` (the ranked methods, see docs/compare.md) and each ok method's output rows
(``runs/<method>/counterfactuals.jsonl``, in the output contract of :mod:`cfaug.data.contract`) and writes
``DIR/report.html``. The page is one static file: styles and charts (inline SVG drawn here) are inline,
there is no script, and a Content-Security-Policy forbids fetching anything. All text from the data is
HTML-escaped by the template engine (autoescape); the only markup kept from a text is a line break written
as ``<br>`` (:func:`cfaug.evaluate.report.html_report.with_breaks`).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from cfaug.evaluate.report.charts import PALETTE
from cfaug.evaluate.report.html_report import ASSETS as EVALUATE_ASSETS
from cfaug.evaluate.report.html_report import with_breaks
from cfaug.nlp.word_diff import word_diff

ASSETS = Path(__file__).parent / "assets"
#: the colour of the reference condition (e.g. human counterfactuals) in the downstream bars
REFERENCE_COLOR = "#9c9c9c"
#: how many source texts the side-by-side section shows by default
EXAMPLES = 5


class CompareReportError(ValueError):
    """The folder is not a comparison directory (no readable ``summary.json``)."""


# --- reading the directory ---------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise CompareReportError(f"{path}: not valid JSON: {exc}") from exc


@dataclass
class MethodOutput:
    """One method's output rows, first rewrite per source text: ``by_source[source_id]`` holds the row."""

    rows: int = 0
    by_source: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str = ""


def read_output(path: Path) -> MethodOutput:
    """The rows of one output file (JSON lines); a missing file or a bad line is said in ``problem``."""
    out = MethodOutput()
    if not path.is_file():
        out.problem = f"no output file at {path.name}"
        return out
    bad = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if not isinstance(row, dict):
                bad += 1
                continue
            out.rows += 1
            sid = str(row.get("source_id", ""))
            out.by_source.setdefault(sid, row)
    if bad:
        out.problem = f"{bad} unreadable line{'s' if bad != 1 else ''} in {path.name} left out"
    return out


def contract_columns(row: dict[str, Any]) -> tuple[list[str], str | None]:
    """(text columns, label column) of an output row. The contract writes the text columns, then the label
    column, then ``source_id``, and an ``original_<col>`` for each of them: so the label column is the last
    column with an original before ``source_id`` (``label`` when the order is lost)."""
    keys = list(row)
    paired = [k for k in keys if not k.startswith("original_") and f"original_{k}" in row]
    before = keys[: keys.index("source_id")] if "source_id" in keys else keys
    in_front = [k for k in before if k in paired]
    if len(in_front) >= 2:
        label = in_front[-1]
    else:
        label = "label" if "label" in paired else None
    return [k for k in paired if k != label], label


# --- formatting ----------------------------------------------------------------------------------------------


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _pct(v: Any) -> str:
    return f"{v:.1%}" if _num(v) else "n/a"


def _dec(v: Any, digits: int = 3) -> str:
    return f"{v:.{digits}f}" if _num(v) else "n/a"


def _seconds(v: Any) -> str:
    if not _num(v):
        return "n/a"
    if v < 120:
        return f"{v:.1f} s"
    return f"{v / 60:.1f} min" if v < 7200 else f"{v / 3600:.1f} h"


def _int(v: Any) -> str:
    return f"{int(v):,}" if _num(v) else "n/a"


def _pts(v: Any) -> str:
    """An accuracy difference in percentage points."""
    return f"{100 * v:+.1f}" if _num(v) else "n/a"


def _ci(v: Any) -> str:
    """A rate's 95% interval in percent, e.g. ``[32.8%, 51.8%]``; empty without one."""
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(_num(x) for x in v):
        return f"[{v[0]:.1%}, {v[1]:.1%}]"
    return ""


def _usd(v: Any) -> str:
    if not _num(v):
        return "n/a"
    return f"${v:.4f}" if v < 1 else f"${v:,.2f}"


def _scalar(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def _kv(d: Any) -> list[tuple[str, str]]:
    return [(str(k), _scalar(v)) for k, v in d.items() if v not in (None, "", [], {})] if isinstance(d, dict) else []


# --- charts (inline SVG) -------------------------------------------------------------------------------------


def _nice_max(v: float) -> float:
    """The smallest of 0.1, 0.2, 0.25, 0.5, 1 (times a power of ten) at or above ``v``."""
    if v <= 0:
        return 0.1
    p = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * p >= v - 1e-12:
            return m * p
    return 10 * p


def _svg_open(cls: str, width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {cls}" role="img" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}"><title>{escape(title)}</title>')


def tradeoff_chart(points: Sequence[tuple[str, float, float, str]]) -> str:
    """Flip rate (up) against edit rate (right): one labelled point per ``(method, edit_rate, flip_rate,
    colour)``. Up and to the left is better: more labels flipped with fewer words changed."""
    width, height, left, right, top, bottom = 560, 360, 56, 150, 28, 46
    pw, ph = width - left - right, height - top - bottom
    xmax = _nice_max(max([e for _, e, _, _ in points] + [0.0]) * 1.1)
    ticks_x = [xmax * i / 5 for i in range(6)]

    def sx(x: float) -> float:
        return left + pw * min(max(x, 0.0), xmax) / xmax

    def sy(y: float) -> float:
        return top + ph * (1 - min(max(y, 0.0), 1.0))

    parts = [_svg_open("tradeoff", width, height, "flip rate against edit rate"),
             f'<text x="{left}" y="16" class="chart-title">flip rate against edit rate (up and left is better)</text>',
             f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="plot-area"/>']
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = sy(t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{t:.0%}</text>')
    for t in ticks_x:
        x = sx(t)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{t:.0%}</text>'
                     if round(t * 100, 6) == round(t * 100) else
                     f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{100 * t:.1f}%</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" class="axis-title">'
                 'edit rate (share of tokens changed)</text>')
    parts.append(f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" class="axis-title" '
                 f'transform="rotate(-90 14 {top + ph / 2:.1f})">flip rate (independent judge)</text>')
    placed: list[tuple[float, float]] = []
    for name, e, f, colour in points:
        x, y = sx(e), sy(f)
        ly = y + 4
        while any(abs(ly - py) < 13 and abs(x - px) < 120 for px, py in placed):
            ly += 13
        placed.append((x, ly))
        parts.append(f'<circle class="point" data-method="{escape(name)}" cx="{x:.1f}" cy="{y:.1f}" r="6" '
                     f'fill="{colour}"><title>{escape(name)}: flip rate {f:.1%}, edit rate {e:.1%}</title></circle>')
        parts.append(f'<text x="{x + 10:.1f}" y="{ly:.1f}" class="point-label">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass
class Gain:
    """One bar of the downstream chart."""

    name: str
    gain: float
    lo: float | None
    hi: float | None
    colour: str
    reference: bool = False


def gain_chart(test_set: str, gains: Sequence[Gain]) -> str:
    """Horizontal bars of accuracy gain over originals alone (percentage points) on ``test_set``, each with
    its 95% interval as a whisker; a dashed line marks no gain."""
    width, bar_h, gap, left, right, top = 560, 20, 10, 150, 150, 34
    height = top + len(gains) * (bar_h + gap) + 22
    values = [v for g in gains for v in (g.gain, g.lo, g.hi) if v is not None] + [0.0]
    lo_d, hi_d = min(values), max(values)
    span = (hi_d - lo_d) or 0.01
    lo_d, hi_d = lo_d - 0.05 * span, hi_d + 0.05 * span
    pw = width - left - right

    def sx(v: float) -> float:
        return left + pw * (v - lo_d) / (hi_d - lo_d)

    zero = sx(0.0)
    parts = [_svg_open("gains", width, height, f"downstream gain on {test_set}"),
             (f'<text x="0" y="16" class="chart-title">{escape(test_set)}: accuracy gain over originals alone '
              '(points, 95% interval)</text>')]
    for i, g in enumerate(gains):
        y = top + i * (bar_h + gap)
        x0, x1 = sorted((zero, sx(g.gain)))
        cls = "bar reference" if g.reference else "bar"
        parts.append(f'<text x="{left - 6}" y="{y + bar_h - 5}" text-anchor="end">{escape(g.name)}</text>')
        parts.append(f'<rect class="{cls}" data-method="{escape(g.name)}" x="{x0:.1f}" y="{y}" '
                     f'width="{max(x1 - x0, 1):.1f}" height="{bar_h}" fill="{g.colour}"/>')
        label = f"{_pts(g.gain)}"
        if g.lo is not None and g.hi is not None:
            cy, a, b = y + bar_h / 2, sx(g.lo), sx(g.hi)
            parts.append(f'<g class="ci" data-method="{escape(g.name)}">'
                         f'<line x1="{a:.1f}" y1="{cy:.1f}" x2="{b:.1f}" y2="{cy:.1f}"/>'
                         f'<line x1="{a:.1f}" y1="{cy - 6:.1f}" x2="{a:.1f}" y2="{cy + 6:.1f}"/>'
                         f'<line x1="{b:.1f}" y1="{cy - 6:.1f}" x2="{b:.1f}" y2="{cy + 6:.1f}"/></g>')
            label += f" [{_pts(g.lo)}, {_pts(g.hi)}]"
        parts.append(f'<text x="{left + pw + 8}" y="{y + bar_h - 5}">{escape(label)}</text>')
    bottom = top + len(gains) * (bar_h + gap) - gap
    parts.append(f'<line class="zero" x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" y2="{bottom + 4}"/>')
    parts.append(f'<text x="{zero:.1f}" y="{bottom + 18}" text-anchor="middle">0</text>')
    parts.append("</svg>")
    return "".join(parts)


def time_chart(times: Sequence[tuple[str, float, str]]) -> str:
    """Horizontal bars of run time per method."""
    width, bar_h, gap, left, right, top = 560, 18, 8, 150, 90, 26
    height = top + len(times) * (bar_h + gap)
    biggest = max([t for _, t, _ in times] + [1e-9])
    parts = [_svg_open("times", width, height, "time per method"),
             '<text x="0" y="16" class="chart-title">time per method</text>']
    for i, (name, t, colour) in enumerate(times):
        y = top + i * (bar_h + gap)
        w = (width - left - right) * t / biggest
        parts.append(f'<text x="{left - 6}" y="{y + bar_h - 4}" text-anchor="end">{escape(name)}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{max(w, 1):.1f}" height="{bar_h}" fill="{colour}"/>')
        parts.append(f'<text x="{left + w + 6:.1f}" y="{y + bar_h - 4}">{escape(_seconds(t))}</text>')
    parts.append("</svg>")
    return "".join(parts)


# --- sections ------------------------------------------------------------------------------------------------


def _colours(methods: Iterable[dict[str, Any]]) -> dict[str, str]:
    ok = [m["method"] for m in methods if m.get("status") == "ok"]
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(ok)}


def _fluency(v: Any) -> str:
    if isinstance(v, dict) and _num(v.get("value")):
        text = _dec(v["value"], 2)
        if _num(v.get("originals")):
            text += f" (originals {_dec(v['originals'], 2)})"
        return text
    return "n/a"


def _llm(v: Any) -> dict[str, str] | None:
    if not isinstance(v, dict):
        return None
    return {"requests": _int(v.get("requests")), "input_tokens": _int(v.get("input_tokens")),
            "output_tokens": _int(v.get("output_tokens")), "cost": _usd(v.get("cost_usd"))}


def _ranking(methods: list[dict[str, Any]], colours: dict[str, str]) -> list[dict[str, Any]]:
    rows, rank = [], 0
    for m in methods:
        if m.get("status") == "reference":
            continue
        ok = m.get("status") == "ok"
        rank += ok
        rows.append({
            "rank": rank if ok else "", "method": m.get("method", "?"), "status": m.get("status", "?"),
            "reason": m.get("reason") or "", "colour": colours.get(m.get("method", ""), ""),
            "rows": _int(m.get("rows")), "counterfactuals": _int(m.get("counterfactuals")),
            "tied": bool(m.get("tied_with_leader")),
            "vs_leader_p": _vs_leader_p(m.get("vs_leader")),
            "coverage": _pct(m.get("coverage")), "coverage_ci": _ci(m.get("coverage_ci")),
            "flipped_coverage": _pct(m.get("flipped_coverage")),
            "flipped_coverage_ci": _ci(m.get("flipped_coverage_ci")),
            "flip_rate": _pct(m.get("flip_rate")), "flip_rate_ci": _ci(m.get("flip_rate_ci")),
            "edit_rate": _pct(m.get("edit_rate")), "minimality": _dec(m.get("minimality")),
            "similarity": _dec(m.get("similarity")), "fluency": _fluency(m.get("fluency")),
            "diversity": _dec(m.get("diversity")), "seconds": _seconds(m.get("seconds")),
            "llm": _llm(m.get("llm")), "run_dir": m.get("run_dir") or ""})
    return rows


def _vs_leader_p(v: Any) -> str:
    """The p of the paired test against the leader, e.g. ``0.12`` (``<0.001`` below that); empty without one."""
    p = v.get("p") if isinstance(v, dict) else None
    if not _num(p):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def _fluency_name(methods: list[dict[str, Any]]) -> str:
    for m in methods:
        f = m.get("fluency")
        if isinstance(f, dict) and f.get("name"):
            return str(f["name"])
    return ""


def _tradeoff(methods: list[dict[str, Any]], colours: dict[str, str]) -> dict[str, Any]:
    points, missing = [], []
    for m in methods:
        if m.get("status") != "ok":
            continue
        if _num(m.get("flip_rate")) and _num(m.get("edit_rate")):
            points.append((m["method"], float(m["edit_rate"]), float(m["flip_rate"]), colours[m["method"]]))
        else:
            missing.append(m["method"])
    return {"chart": tradeoff_chart(points) if points else "", "missing": missing, "n": len(points)}


def _downstream(methods: list[dict[str, Any]], colours: dict[str, str], summary_downstream: Any) -> dict[str, Any] | None:
    test_sets: list[str] = []
    for m in methods:
        for ts in (m.get("downstream") or {}) if isinstance(m.get("downstream"), dict) else ():
            if ts not in test_sets:
                test_sets.append(ts)
    if not test_sets and not summary_downstream:
        return None
    charts, table = [], []
    for ts in test_sets:
        gains = []
        for m in methods:
            fig = (m.get("downstream") or {}).get(ts) if isinstance(m.get("downstream"), dict) else None
            if not isinstance(fig, dict) or not _num(fig.get("gain")):
                continue
            ci = fig.get("ci95")
            lo, hi = (ci if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(_num(c) for c in ci)
                      else (None, None))
            ref = m.get("status") == "reference"
            gains.append(Gain(m["method"] + (" (reference)" if ref else ""), float(fig["gain"]), lo, hi,
                              REFERENCE_COLOR if ref else colours.get(m["method"], PALETTE[0]), ref))
        if gains:
            charts.append(gain_chart(ts, gains))
    for m in methods:
        d = m.get("downstream") if isinstance(m.get("downstream"), dict) else {}
        if not d:
            continue
        cells = []
        for ts in test_sets:
            fig = d.get(ts) if isinstance(d.get(ts), dict) else {}
            ci = fig.get("ci95") if isinstance(fig.get("ci95"), (list, tuple)) else None
            cells.append({"accuracy": _pct(fig.get("accuracy")), "gain": _pts(fig.get("gain")),
                          "ci": f"[{_pts(ci[0])}, {_pts(ci[1])}]" if ci and len(ci) == 2 else ""})
        table.append({"method": m["method"], "reference": m.get("status") == "reference", "cells": cells})
    details = json.dumps(summary_downstream, indent=1, ensure_ascii=False) if summary_downstream else ""
    ds = summary_downstream if isinstance(summary_downstream, dict) else {}
    return {"charts": charts, "test_sets": test_sets, "table": table, "details": details,
            "selection": _selection(ds.get("selection")), "warnings": _warnings(ds.get("warnings"))}


def _selection(selection: Any) -> list[dict[str, str]]:
    """One row per training condition and seed: the classifier settings chosen, how, and the score."""
    rows = []
    for cond, runs in (selection or {}).items() if isinstance(selection, dict) else ():
        for r in runs if isinstance(runs, list) else ():
            if not isinstance(r, dict):
                continue
            settings = r.get("settings") if isinstance(r.get("settings"), dict) else {}
            rows.append({"condition": str(cond), "seed": _scalar(r.get("seed")),
                         "settings": ", ".join(f"{k}={_scalar(v)}" for k, v in settings.items()),
                         "how": _scalar(r.get("how")), "score": _dec(r.get("score")),
                         "metric": _scalar(r.get("metric")) if _num(r.get("score")) else "",
                         "rows": _int(r.get("rows")), "note": _scalar(r.get("note"))})
    return rows


def _warnings(warnings: Any) -> list[str]:
    from cfaug.evaluate.downstream.harness import describe_warning

    out = []
    for w in warnings if isinstance(warnings, list) else ():
        try:
            out.append(describe_warning(w))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _cost(methods: list[dict[str, Any]], colours: dict[str, str]) -> dict[str, Any]:
    ok = [m for m in methods if m.get("status") == "ok"]
    times = [(m["method"], float(m["seconds"]), colours[m["method"]]) for m in ok if _num(m.get("seconds"))]
    llm = [{"method": m["method"], **_llm(m["llm"])} for m in ok if isinstance(m.get("llm"), dict)]
    return {"chart": time_chart(times) if times else "", "llm": llm}


def _segments(original: str, new: str) -> list[dict[str, str]]:
    return [{"op": s.op, "text": s.text} for s in word_diff(original, new)]


def _edits_count(meta: Any) -> int | None:
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            return None
    edits = meta.get("edits") if isinstance(meta, dict) else None
    return len(edits) if isinstance(edits, list) else None


def choose_sources(outputs: dict[str, MethodOutput], n: int, seed: int) -> list[str]:
    """Up to ``n`` source ids, those rewritten by the most methods first, ties broken at random (seeded)."""
    cover: dict[str, int] = {}
    for out in outputs.values():
        for sid in out.by_source:
            cover[sid] = cover.get(sid, 0) + 1
    ids = sorted(cover)
    random.Random(seed).shuffle(ids)
    ids.sort(key=lambda s: -cover[s])  # stable: the shuffle breaks ties
    return ids[:n]


def _examples(out_dir: Path, methods: list[dict[str, Any]], colours: dict[str, str], n: int,
              seed: int) -> dict[str, Any]:
    ok = [m for m in methods if m.get("status") == "ok"]
    outputs: dict[str, MethodOutput] = {}
    problems = []
    for m in ok:
        rel = m.get("output") or f"runs/{m['method']}/counterfactuals.jsonl"
        out = read_output(out_dir / rel)
        outputs[m["method"]] = out
        if out.problem:
            problems.append(f"{m['method']}: {out.problem}")
    chosen = choose_sources(outputs, n, seed)
    items = []
    for sid in chosen:
        first = next(o.by_source[sid] for o in outputs.values() if sid in o.by_source)
        text_cols, label_col = contract_columns(first)
        many = len(text_cols) > 1
        original = [{"column": c if many else "", "text": str(first.get(f"original_{c}", ""))} for c in text_cols]
        rewrites = []
        for m in ok:
            row = outputs[m["method"]].by_source.get(sid)
            if row is None:
                rewrites.append({"method": m["method"], "colour": colours[m["method"]], "missing": True})
                continue
            fields = [{"column": c if many else "",
                       "segments": _segments(str(row.get(f"original_{c}", "")), str(row.get(c, "")))}
                      for c in text_cols]
            rewrites.append({"method": m["method"], "colour": colours[m["method"]], "missing": False,
                             "label": _scalar(row.get(label_col)) if label_col else "",
                             "edits": _edits_count(row.get("meta")), "fields": fields})
        items.append({"source_id": sid, "label": _scalar(first.get(f"original_{label_col}")) if label_col else "",
                      "original": original, "rewrites": rewrites,
                      "covered": sum(not r["missing"] for r in rewrites)})
    return {"items": items, "problems": problems, "n_ok": len(ok),
            "sources": len({s for o in outputs.values() for s in o.by_source})}


# --- the page ------------------------------------------------------------------------------------------------


def build_report(out_dir: str | os.PathLike[str], examples: int = EXAMPLES, seed: int | None = None) -> str:
    """The report of the comparison directory ``out_dir`` as an HTML string: ``examples`` source texts in
    the side-by-side section, chosen with ``seed`` (default: compare.json's seed, else 0)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from markupsafe import Markup

    path = Path(out_dir)
    summary = _read_json(path / "summary.json")
    if not isinstance(summary, dict) or not isinstance(summary.get("methods"), list):
        raise CompareReportError(f"{path}: not a comparison directory (expected summary.json with a "
                                 "'methods' list, as written by 'cfaug compare')")
    asked = _read_json(path / "compare.json")
    asked = asked if isinstance(asked, dict) else {}
    if seed is None:
        seed = int(asked["seed"]) if _num(asked.get("seed")) else 0
    methods = [m for m in summary["methods"] if isinstance(m, dict) and m.get("method")]
    colours = _colours(methods)
    ranking = _ranking(methods, colours)
    tradeoff = _tradeoff(methods, colours)
    tradeoff["chart"] = Markup(tradeoff["chart"])
    downstream = _downstream(methods, colours, summary.get("downstream"))
    if downstream:
        downstream["charts"] = [Markup(c) for c in downstream["charts"]]
    cost = _cost(methods, colours)
    cost["chart"] = Markup(cost["chart"])
    data = summary.get("data") if isinstance(summary.get("data"), dict) else {}
    by_status: dict[str, list[str]] = {}
    for m in methods:
        by_status.setdefault(str(m.get("status")), []).append(m["method"])
    env = Environment(loader=FileSystemLoader(str(ASSETS)), autoescape=select_autoescape(["j2", "html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["with_breaks"] = with_breaks
    css = (EVALUATE_ASSETS / "report.css").read_text(encoding="utf-8") + (ASSETS / "compare.css").read_text(
        encoding="utf-8")
    from cfaug.compare.summary import none_counts, reason_note

    return env.get_template("compare.html.j2").render(
        ranking=ranking, by_status=by_status, ranking_rule=summary.get("ranking_rule") or "",
        ranking_note=summary.get("ranking_note") or "",
        without=[{"method": m, "count": n, "reasons": [reason_note(g) for g in groups]}
                 for m, n, groups in none_counts(summary)],
        fluency_name=_fluency_name(methods), tradeoff=tradeoff, downstream=downstream, cost=cost,
        examples=_examples(path, methods, colours, examples, seed),
        data=_kv(data), judge=_kv(summary.get("judge")), asked=_kv(asked),
        data_name=Path(str(data.get("path") or asked.get("data") or "")).name,
        rows=data.get("rows") if data.get("rows") is not None else next(
            (m.get("rows") for m in methods if m.get("rows") is not None), "?"),
        css=Markup(css), generated=time.strftime("%Y-%m-%d %H:%M:%S %z"), out_dir=str(path))


def write_report(out_dir: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *,
                 examples: int = EXAMPLES, seed: int | None = None) -> Path:
    """Write the report (default ``DIR/report.html``) and return its path."""
    out = Path(output) if output else Path(out_dir) / "report.html"
    from cfaug.run.outputs import write_text_atomic

    write_text_atomic(out, build_report(out_dir, examples=examples, seed=seed))
    return out
