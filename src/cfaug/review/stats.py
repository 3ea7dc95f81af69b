"""Review statistics of a run directory: counts per decision, method and annotator, time per decision,
and agreement between annotators on the items they share.

Counts are of live decisions (the latest of each annotator on each item, not undone). Time per decision
is the median of the seconds the page measured (decisions recorded without a time, e.g. imported ones,
are left out of it). Agreement is computed on the items at least two annotators decided, with each
annotator's decision as the label (``other_label`` counts per label named; a skip is no label):
Cohen's kappa for two annotators, Fleiss' kappa and Krippendorff's alpha for any number
(:mod:`cfaug.evaluate.agreement`).
"""

from __future__ import annotations

import os
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cfaug.evaluate.agreement import Agreement, agreement
from cfaug.review.export import combine, vote_key
from cfaug.review.items import load_items
from cfaug.run.decisions import DECISIONS, STORE_FILE, Decision, ReviewStore


def decision_units(current: Mapping[tuple[str, str], Decision]) -> dict[str, dict[str, str]]:
    """``{item: {annotator: vote}}`` of the live decisions, skips left out (the input of agreement)."""
    units: dict[str, dict[str, str]] = defaultdict(dict)
    for (item, annotator), d in current.items():
        if d.decision != "skipped":
            units[item][annotator] = vote_key(d)
    return dict(units)


def decision_agreement(current: Mapping[tuple[str, str], Decision]) -> Agreement:
    """Agreement between annotators on the items at least two of them decided."""
    return agreement(decision_units(current))


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def review_stats(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The statistics of ``run_dir`` as a JSON-ready dict (``decisions: 0`` when nobody decided
    anything yet; the review store is not created by asking)."""
    run_dir = Path(run_dir)
    items = load_items(run_dir, include_failed=True)
    passed = sum(1 for it in items.items if it.passed)
    out: dict[str, Any] = {"run_dir": str(run_dir), "items": passed, "items_failed_filters": len(items) - passed,
                           "decisions": 0}
    if not (run_dir / STORE_FILE).exists():
        return out
    with ReviewStore(run_dir, create=False) as store:
        current = store.current()
        history = store.history()
    if not current:
        out["undone"] = sum(d.undone for d in history)
        return out
    method_of = {it.id: it.method for it in items.items}
    by_decision = Counter(d.decision for d in current.values())
    by_method: dict[str, Counter[str]] = defaultdict(Counter)
    by_annotator: dict[str, Counter[str]] = defaultdict(Counter)
    seconds: dict[str, list[float]] = defaultdict(list)
    seconds_by_annotator: dict[str, list[float]] = defaultdict(list)
    for (item, annotator), d in current.items():
        by_method[method_of.get(item, "(not in the run)")][d.decision] += 1
        by_annotator[annotator][d.decision] += 1
        if d.seconds is not None:
            seconds[d.decision].append(d.seconds)
            seconds_by_annotator[annotator].append(d.seconds)
    decided_items = {item for item, _ in current}
    combined = [combine(ds) for ds in _by_item(current).values()]
    all_seconds = [s for v in seconds.values() for s in v]
    out.update({
        "decisions": len(current),
        "items_decided": len(decided_items & set(method_of)),
        "items_undecided": sum(1 for it in items.items if it.passed and it.id not in decided_items),
        "decisions_on_unknown_items": sum(1 for item, _ in current if item not in method_of),
        "undone": sum(d.undone for d in history),
        "by_decision": {k: by_decision[k] for k in DECISIONS if by_decision[k]},
        "by_method": {m: _ordered(c) for m, c in sorted(by_method.items())},
        "by_annotator": {a: _ordered(c) for a, c in sorted(by_annotator.items())},
        "seconds_median": _median(all_seconds),
        "seconds_median_by_decision": {k: _median(v) for k, v in seconds.items() if v},
        "seconds_median_by_annotator": {a: _median(v) for a, v in sorted(seconds_by_annotator.items())},
        "combined": {"items": sum(v is not None for v in combined),
                     "ties": sum(1 for v in combined if v is not None and v.decision is None),
                     "by_decision": dict(Counter(v.decision for v in combined if v is not None and v.decision))},
        "agreement": decision_agreement(current).to_dict(),
    })
    return out


def _by_item(current: Mapping[tuple[str, str], Decision]) -> dict[str, list[Decision]]:
    out: dict[str, list[Decision]] = defaultdict(list)
    for (item, _), d in current.items():
        out[item].append(d)
    return out


def _ordered(c: Counter[str]) -> dict[str, int]:
    return {k: c[k] for k in DECISIONS if c[k]}


def format_stats(s: dict[str, Any]) -> str:
    """The statistics as text for the terminal."""
    lines = [f"run directory   {s['run_dir']}",
             f"items           {s['items']} to review" + (f" ({s['items_failed_filters']} more failed the method's "
                                                           "filters)" if s.get("items_failed_filters") else "")]
    if not s.get("decisions"):
        extra = f" ({s['undone']} recorded and undone)" if s.get("undone") else ""
        lines.append(f"decisions       none yet{extra}; review with: cfaug review serve {s['run_dir']}")
        return "\n".join(lines)
    lines += [f"decisions       {s['decisions']} live ({s['undone']} undone) on {s['items_decided']} items; "
              f"{s['items_undecided']} items undecided",
              "time            " + (f"median {_secs(s['seconds_median'])} s per decision"
                                    if s["seconds_median"] is not None
                                    else "no decision has a time (the page measures it; imports have none)")]
    if s.get("decisions_on_unknown_items"):
        lines.append(f"warning         {s['decisions_on_unknown_items']} decisions name items that are not rows of "
                     "this run")
    cols = [d for d in DECISIONS if s["by_decision"].get(d)]
    _table(lines, ["decision", "count", "median s"],
           [[d, str(s["by_decision"][d]), _secs(s["seconds_median_by_decision"].get(d))] for d in cols])
    _table(lines, ["method", *cols, "total"],
           [[m, *(str(c.get(d, 0)) for d in cols), str(sum(c.values()))] for m, c in s["by_method"].items()])
    _table(lines, ["annotator", *cols, "total", "median s"],
           [[a, *(str(c.get(d, 0)) for d in cols), str(sum(c.values())),
             _secs(s["seconds_median_by_annotator"].get(a))] for a, c in s["by_annotator"].items()])
    ag = s["agreement"]
    lines.append("")
    if not ag["shared_items"]:
        lines.append("agreement       no item was decided by two annotators (serve with another --annotator to "
                     "measure it)")
    else:
        lines.append(f"agreement       on {ag['shared_items']} items decided by at least two annotators "
                     f"({', '.join(ag['annotators'])}); observed {_num(ag['observed'])}")
        if ag["cohen_kappa"] is not None or len(ag["annotators"]) == 2:
            lines.append(f"  Cohen's kappa         {_num(ag['cohen_kappa'])}")
        lines.append(f"  Krippendorff's alpha  {_num(ag['krippendorff_alpha'])}")
        lines.append(f"  Fleiss' kappa         {_num(ag['fleiss_kappa'])}")
        if len(ag["annotators"]) > 2:
            for pair, v in ag["pairwise"].items():
                lines.append(f"  {pair.replace('|', ' & ')}: Cohen's kappa {_num(v['cohen_kappa'])} on {v['items']} items")
        comb = s["combined"]
        lines.append(f"combined        majority per item: {comb['ties']} ties (left out of export)")
    return "\n".join(lines)


def _table(lines: list[str], head: list[str], body: list[list[str]]) -> None:
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines.append("")
    for r in (head, *body):
        lines.append("  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths))))


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _num(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.3f}"
