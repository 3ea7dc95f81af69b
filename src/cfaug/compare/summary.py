"""``DIR/summary.json`` and ``DIR/summary.md``: one entry per requested method, ranked, plus one per
``--reference`` set (downstream figures only).

Ranking rule (:data:`RANKING_RULE`): the methods that finished (status ``ok``) come first, by flipped
coverage (the share of sampled rows that got at least one counterfactual the independent judge reads as
the target label: a method must both write a counterfactual and flip the label), higher first; ties by
lower edit rate, then by less time. Without a judge, coverage takes flipped coverage's place. Methods that
failed, then those skipped, follow in the order asked; downstream gains are shown beside the rank, not
used for it (their intervals tell whether a difference is more than noise).

Every rate has its 95% Wilson interval beside it (``coverage_ci``, ``flipped_coverage_ci``, ``flip_rate_ci``;
:mod:`cfaug.compare.intervals`), and a finished method that a paired test on the shared rows (exact McNemar
on the rows only one of the two succeeded on, ``vs_leader``) does not tell from the leader at the 5% level
is marked ``tied_with_leader`` (≈ in the tables), with one sentence (``ranking_note``) above the table that
says which.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from cfaug.compare.intervals import add_intervals, mark_ties
from cfaug.run.summary import VARIES, ReasonGroup, group_reasons

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
SUMMARY_VERSION = 1

RANKING_RULE = ("finished methods first, by flipped coverage (share of sampled rows with at least one "
                "counterfactual the independent judge gives its target label; coverage when there is no judge), "
                "higher first; ties by lower edit rate, then by fewer seconds. Failed, then skipped methods "
                "follow in the order asked. Downstream gains are reported, not ranked on.")

STATUS_ORDER = {"ok": 0, "failed": 1, "skipped": 2}


def rank_key(entry: dict[str, Any]) -> tuple:
    primary = entry.get("flipped_coverage")
    if primary is None:
        primary = entry.get("coverage")
    return (-(primary if primary is not None else -1.0),
            entry["edit_rate"] if entry.get("edit_rate") is not None else math.inf,
            entry["seconds"] if entry.get("seconds") is not None else math.inf)


def rank(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` (one per requested method, in the order asked) in ranked order (see the module)."""
    ok = sorted((e for e in entries if e["status"] == "ok"), key=rank_key)
    rest = sorted((e for e in entries if e["status"] != "ok"), key=lambda e: STATUS_ORDER.get(e["status"], 3))
    for n, e in enumerate(ok, start=1):
        e["rank"] = n
    for e in rest:
        e["rank"] = None
    return ok + rest


def write_summary(out_dir: Path, summary: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``summary.json`` and ``summary.md``; returns their paths."""
    from cfaug.run.outputs import write_text_atomic

    j, m = out_dir / SUMMARY_JSON, out_dir / SUMMARY_MD
    for path, text in ((j, json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n"),
                       (m, markdown(summary) + "\n")):
        write_text_atomic(path, text)
    return j, m


def build_summary(entries: list[dict[str, Any]], references: list[dict[str, Any]], judge: dict[str, Any],
                  data: dict[str, Any], downstream: dict[str, Any] | None, evaluation: dict[str, Any],
                  outcomes: dict[str, dict[str, set[str]]] | None = None) -> dict[str, Any]:
    """The summary of a comparison: the method ``entries`` ranked (:func:`rank`) with their intervals, the
    paired test of each against the leader (``outcomes``: per method and figure, the rows it succeeded on;
    :func:`cfaug.compare.intervals.mark_ties`), then the ``references``, and what was compared."""
    ranked = rank([add_intervals(e) for e in entries])
    note = mark_ties(ranked, outcomes)
    return {
        "version": SUMMARY_VERSION,
        "methods": ranked + references,
        "ranking": [e["method"] for e in ranked if e["status"] == "ok"],
        "ranking_rule": RANKING_RULE,
        "ranking_note": note,
        "judge": judge,
        "data": data,
        "downstream": downstream,
        "evaluation": evaluation,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _pct(v: Any) -> str:
    return "" if v is None else f"{100 * v:.1f}"


def _num(v: Any, digits: int = 3) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def _pct_ci(v: Any, ci: Any) -> str:
    """A rate in percent with its interval, e.g. ``42.0 [32.8, 51.8]``."""
    if v is None:
        return ""
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f"{100 * v:.1f} [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    return _pct(v)


def _rank(e: dict[str, Any]) -> str:
    return "" if not e.get("rank") else f"{e['rank']}" + (" ≈" if e.get("tied_with_leader") else "")


def _gain(d: dict[str, Any] | None) -> str:
    if not d:
        return ""
    lo, hi = d["ci95"]
    return f"{100 * d['gain']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"


def test_names(summary: dict[str, Any]) -> list[str]:
    ds = summary.get("downstream") or {}
    return list((ds.get("tests") or {}).keys())


def table_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the summary table (strings)."""
    tests = test_names(summary)
    head = ["rank", "method", "status", "rows", "cfs", "coverage % [95% CI]", "flipped cov. % [95% CI]",
            "flip rate % [95% CI]", "edit rate",
            "similarity", "fluency (orig.)", "distinct-2", "seconds", "LLM req.", "tokens in/out", "cost USD"]
    head += [f"gain on {t} (pp, 95% CI)" for t in tests]
    rows = []
    for e in summary["methods"]:
        llm = e.get("llm") or {}
        flu = e.get("fluency") or {}
        fluency = "" if not flu else f"{flu['value']:.1f}" + (f" ({flu['originals']:.1f})" if flu.get("originals")
                                                             is not None else "")
        row = [_rank(e), e["method"], e["status"], str(e.get("rows") or ""),
               "" if e.get("counterfactuals") is None else str(e["counterfactuals"]),
               _pct_ci(e.get("coverage"), e.get("coverage_ci")),
               _pct_ci(e.get("flipped_coverage"), e.get("flipped_coverage_ci")),
               _pct_ci(e.get("flip_rate"), e.get("flip_rate_ci")),
               _num(e.get("edit_rate")), _num(e.get("similarity")), fluency, _num(e.get("diversity")),
               "" if e.get("seconds") is None else f"{e['seconds']:.1f}",
               (str(llm["requests"]) + (f" (+{llm['cache_hits']} cached)" if llm.get("cache_hits") else ""))
               if llm else "",
               f"{llm['input_tokens']}/{llm['output_tokens']}" if llm else "",
               ("unknown" if llm.get("cost_usd") is None else f"{llm['cost_usd']:.4f}") if llm else ""]
        row += [_gain((e.get("downstream") or {}).get(t)) for t in tests]
        rows.append(row)
    return head, rows


def none_counts(summary: dict[str, Any]) -> list[tuple[str, int, list[ReasonGroup]]]:
    """(method, items with no counterfactual, their reasons grouped by kind, the kinds with most items
    first: :func:`cfaug.run.summary.group_reasons`) for every method with such items; the groups add up to
    the count. Every reason in full stays in the entry's ``without_reasons``."""
    out = []
    for e in summary["methods"]:
        n = e.get("items_without_counterfactual")
        if n:
            out.append((str(e["method"]), int(n), group_reasons(e.get("without_reasons") or {})))
    return out


def reason_note(group: ReasonGroup) -> str:
    """One kind of reason with its count and two examples of what varies, e.g. ``the classifier gives the
    source label … (24; e.g. … = 0.03; 0.26)``."""
    examples = group.examples()
    return f"{group.label} ({group.count}" + (f"; e.g. {VARIES} = {'; '.join(examples)}" if examples else "") + ")"


def none_notes(summary: dict[str, Any]) -> list[str]:
    """One line per method with items that got no counterfactual: how many, and why (by kind)."""
    return [f"- **{m}**: {n} item{'s' if n != 1 else ''} with no counterfactual: "
            + "; ".join(reason_note(g) for g in groups) for m, n, groups in none_counts(summary)]


def downstream_lines(ds: dict[str, Any]) -> list[str]:
    """How each downstream training condition chose its classifier's settings, and the warnings."""
    from cfaug.compare.downstream import selection_facts
    from cfaug.evaluate.downstream.harness import describe_warning
    from cfaug.evaluate.downstream.table import chosen_lines

    lines = []
    selection = ds.get("selection") or {}
    if selection:
        lines += ["", "Downstream classifier settings, per training condition (with the score each seed chose them "
                  "on):", ""]
        lines += chosen_lines({cond: [selection_facts(r) for r in runs] for cond, runs in selection.items()})
    warnings = ds.get("warnings") or []
    if warnings:
        lines += ["", f"**Warning**: {len(warnings)} downstream model{'s' if len(warnings) != 1 else ''} predicted "
                  "nearly one label for a whole test set; read those accuracies and gains as the label counts, "
                  "not as what the training data taught:", ""]
        lines += [f"- {describe_warning(w)}" for w in warnings]
    return lines


def markdown(summary: dict[str, Any]) -> str:
    head, rows = table_rows(summary)
    lines = [summary["ranking_note"], ""] if summary.get("ranking_note") else []
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines.append("")
    notes = [f"- **{e['method']}** {e['status']}: {e['reason']}" for e in summary["methods"] if e.get("reason")]
    without = none_notes(summary)
    notes += without
    if notes:
        lines += notes + [""]
    if without:
        lines += ["Reasons that differ only in a number or a quoted word are counted as one kind; each reason in "
                  "full is in summary.json (`without_reasons`) and in each method's run directory.", ""]
    judge = summary.get("judge") or {}
    data = summary.get("data") or {}
    lines.append(f"Rows: {data.get('rows_taken') or data.get('rows')} from {data.get('path')}"
                 + (f" (ids in {data['sample']})" if data.get("sample") else "") + ".")
    lines.append(f"Judge: {judge.get('kind', 'none')}" + (f" ({judge['judge']})" if judge.get("judge") else "")
                 + (f"; {judge['note']}" if judge.get("note") else "") + ".")
    ds = summary.get("downstream")
    if ds:
        lines.append(f"Downstream: {ds.get('classifier')}, seeds {', '.join(map(str, ds.get('seeds', [])))} "
                     f"({ds.get('seeds_note')}); gain = accuracy with the method's counterfactuals added minus "
                     "accuracy on originals alone, in percentage points, with a paired bootstrap 95% interval "
                     "over test items. Paired tests between methods are in downstream.json.")
        lines += downstream_lines(ds) + [""]
    lines.append("Rates: % with a 95% Wilson interval over the sampled rows (coverage, flipped coverage) or the "
                 "counterfactuals (flip rate).")
    lines.append("≈: on the same rows, a paired test of the ranked figure (exact McNemar, over the rows where only "
                 "one of the two succeeded) does not tell the method from the leader at the 5% level (`vs_leader` "
                 "in summary.json).")
    lines.append(f"Ranking: {summary['ranking_rule']}")
    return "\n".join(lines)


def text_table(summary: dict[str, Any]) -> str:
    """The table for a terminal (aligned columns; empty columns left out)."""
    head, rows = table_rows(summary)
    keep = [i for i in range(len(head)) if i < 3 or any(r[i] for r in rows)]
    head = [head[i] for i in keep]
    rows = [[r[i] for i in keep] for r in rows]
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) if rows else len(head[i]) for i in range(len(head))]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(line.rstrip() for line in out)
