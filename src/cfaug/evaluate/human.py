"""What people said about a run's counterfactuals: the human flip rate, and how well the automatic judge
agrees with people (its precision and recall on "flipped").

The decisions come from the run directory's review store (``RUN_DIR/review.sqlite``, written by ``cfaug
review serve`` or a Label Studio import) through :mod:`cfaug.run.decisions`; this module never imports
``cfaug.review``. Only each annotator's live decision per row counts (the latest one not undone).

How a decision counts (the review page has keys of its own for a label that did not flip, so a reject
means the rewrite is bad *for another reason*, such as broken grammar, a changed topic or an edit far
from minimal, and says nothing about its label):

============  ======================  ==========================  =====================
decision      human flip rate         judge's precision/recall    kept (a 0/1 mark)
============  ======================  ==========================  =====================
accepted      flipped                 flipped                     1
edited        flipped                 left out (1)                1
not_flipped   not flipped             not flipped                 0
other_label   not flipped             not flipped                 0
rejected      no say (2)              no say (2)                  0
skipped       no say                  no say                      no say
============  ======================  ==========================  =====================

(1) the judge read the machine's text, which the person then changed, so an edit says nothing about
whether the judge was right on the text it read. (2) counted apart (``rejected_only``).

Several annotators on one row: the majority of those who have a say; an even split leaves the row
undecided (counted as ``ties``, and left out of the rate).

:func:`review_figures` computes everything for a run directory and returns None where no decision was
recorded, so ``cfaug evaluate`` and the HTML report add nothing then.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from cfaug.evaluate.agreement import agreement
from cfaug.evaluate.judgements import read_judgements, text_hash
from cfaug.evaluate.pairs import CounterfactualPair
from cfaug.run.decisions import DECISIONS, Decision, ReviewStore, has_decisions

#: a decision's vote on "flipped" for the human flip rate (absent: no say)
FLIPPED_VOTE = {"accepted": True, "edited": True, "not_flipped": False, "other_label": False}
#: a decision's vote on "flipped" on the text the judge read (an edit changed that text: no say)
AS_WRITTEN_VOTE = {"accepted": True, "not_flipped": False, "other_label": False}
#: a decision's 0/1 mark: was the rewrite good as a counterfactual (LASS's prompt search uses these)
MARK = {"accepted": 1, "edited": 1, "not_flipped": 0, "other_label": 0, "rejected": 0}
#: one line saying how decisions count, stored with the figures
MAPPING = ("flipped: accepted, edited; not flipped: not_flipped, other_label; rejected (bad for another reason) "
           "and skipped: no say; the judge is compared on accepted, not_flipped and other_label (an edit changed "
           "the text it read); several annotators: majority, a tie undecided")

T = TypeVar("T", bound=Hashable)


def majority(votes: Iterable[T | None]) -> T | None:
    """The most common vote, ignoring None; None when there is none or the top two are tied."""
    counts = Counter(v for v in votes if v is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def decision_mark(decision: str) -> int | None:
    """The 0/1 mark of one decision (see the module docstring); None for skipped."""
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}; expected one of {', '.join(DECISIONS)}")
    return MARK.get(decision)


def by_item(decisions: Iterable[Decision]) -> dict[str, dict[str, Decision]]:
    """Live decisions grouped as item -> annotator -> decision (the latest, by ``seq``, where one
    annotator has several on an item)."""
    out: dict[str, dict[str, Decision]] = {}
    for d in sorted(decisions, key=lambda d: d.seq):
        if not d.undone:
            out.setdefault(d.item, {})[d.annotator] = d
    return out


def marks(decisions: Iterable[Decision]) -> dict[str, int]:
    """The majority 0/1 mark per item (items skipped by all, or evenly split, are left out)."""
    out = {}
    for item, per in by_item(decisions).items():
        m = majority(decision_mark(d.decision) for d in per.values())
        if m is not None:
            out[item] = m
    return out


def _rate(yes: int, no: int) -> float | None:
    return round(yes / (yes + no), 6) if yes + no else None


def _verdicts(per_item: Mapping[str, Mapping[str, Decision]], items: Iterable[str],
              votes: Mapping[str, bool]) -> tuple[dict[str, bool], int, int]:
    """(item -> majority verdict, ties, items with no say) over ``items`` that have a decision."""
    out, ties, silent = {}, 0, 0
    for item in items:
        per = per_item.get(item)
        if not per:
            continue
        said = [votes[d.decision] for d in per.values() if d.decision in votes]
        v = majority(said)
        if v is None:
            if said:
                ties += 1
            else:
                silent += 1
        else:
            out[item] = v
    return out, ties, silent


def human_figures(decisions: Iterable[Decision], rows: Mapping[str, str],
                  judge: Mapping[str, bool] | None = None, judge_name: str | None = None) -> dict[str, Any]:
    """The review figures of a run (see the module docstring).

    ``decisions``: the live decisions (``ReviewStore.current().values()``); ``rows``: the rows in scope,
    item id -> method (decisions on other rows are only counted); ``judge``: the automatic judge's
    verdict, item id -> flipped, for the rows it judged (None: no judge ran)."""
    decisions = [d for d in decisions if not d.undone]
    per_item = by_item(decisions)
    by_decision = Counter(d.decision for d in decisions)
    by_annotator: dict[str, Counter[str]] = {}
    for d in decisions:
        by_annotator.setdefault(d.annotator, Counter())[d.decision] += 1
    in_scope = [item for item in rows if item in per_item]
    out: dict[str, Any] = {
        "mapping": MAPPING,
        "annotators": sorted(by_annotator),
        "decisions": {"live": len(decisions), "by_decision": {k: by_decision[k] for k in DECISIONS if by_decision[k]},
                      "by_annotator": {a: {k: c[k] for k in DECISIONS if c[k]}
                                       for a, c in sorted(by_annotator.items())}},
        "rows": {"in_scope": len(rows), "reviewed": len(in_scope),
                 "decided": sum(1 for i in in_scope if any(d.decision != "skipped" for d in per_item[i].values())),
                 "decisions_on_other_rows": sum(len(per) for item, per in per_item.items() if item not in rows)},
    }
    out.update(_group_figures(per_item, in_scope, judge, judge_name))
    units = {item: {a: d.decision for a, d in per_item[item].items() if d.decision != "skipped"} for item in in_scope}
    units = {k: v for k, v in units.items() if v}
    shared = agreement(units) if len(out["annotators"]) >= 2 else None
    out["agreement"] = shared.to_dict() if shared is not None and shared.shared else None
    methods = sorted({rows[i] for i in in_scope})
    if len(set(rows.values())) > 1:
        out["by_method"] = {m: {"reviewed": sum(1 for i in in_scope if rows[i] == m),
                                **_group_figures(per_item, [i for i in in_scope if rows[i] == m], judge, judge_name)}
                            for m in methods}
    return out


def _group_figures(per_item: Mapping[str, Mapping[str, Decision]], items: Sequence[str],
                   judge: Mapping[str, bool] | None, judge_name: str | None) -> dict[str, Any]:
    flipped, ties, silent = _verdicts(per_item, items, FLIPPED_VOTE)
    yes = sum(flipped.values())
    rejected_only = sum(1 for i in items if i not in flipped
                        and any(d.decision == "rejected" for d in per_item[i].values())
                        and not any(d.decision in FLIPPED_VOTE for d in per_item[i].values()))
    kept, kept_ties, _ = _verdicts(per_item, items, {k: bool(v) for k, v in MARK.items()})
    out: dict[str, Any] = {
        "flip_rate": {"value": _rate(yes, len(flipped) - yes), "flipped": yes, "not_flipped": len(flipped) - yes,
                      "n": len(flipped), "ties": ties, "rejected_only": rejected_only},
        "kept_rate": {"value": _rate(sum(kept.values()), len(kept) - sum(kept.values())), "kept": sum(kept.values()),
                      "not_kept": len(kept) - sum(kept.values()), "n": len(kept), "ties": kept_ties},
    }
    out["judge"] = None if judge is None else _judge_figures(per_item, items, judge, judge_name)
    return out


def _judge_figures(per_item: Mapping[str, Mapping[str, Decision]], items: Sequence[str],
                   judge: Mapping[str, bool], judge_name: str | None) -> dict[str, Any]:
    human, ties, _ = _verdicts(per_item, items, AS_WRITTEN_VOTE)
    tp = fp = fn = tn = not_judged = 0
    for item, says in human.items():
        j = judge.get(item)
        if j is None:
            not_judged += 1
        elif j and says:
            tp += 1
        elif j:
            fp += 1
        elif says:
            fn += 1
        else:
            tn += 1
    edited = sum(1 for i in items if i not in human and any(d.decision == "edited" for d in per_item[i].values()))
    n = tp + fp + fn + tn
    return {"name": judge_name, "n": n, "true_positive": tp, "false_positive": fp, "false_negative": fn,
            "true_negative": tn, "precision": _rate(tp, fp), "recall": _rate(tp, fn),
            "agreement": round((tp + tn) / n, 6) if n else None, "ties": ties, "edited_left_out": edited,
            "not_judged": not_judged}


def judge_from_rows(judgements: Iterable[Mapping[str, Any]]) -> tuple[dict[str, bool], str | None]:
    """The judge's verdict per item from rows as :func:`cfaug.evaluate.judgements.judgement_rows` makes
    them, and the judge's name."""
    verdicts, names = {}, Counter()
    for r in judgements:
        if isinstance(r.get("item"), str) and isinstance(r.get("flipped"), bool):
            verdicts[r["item"]] = r["flipped"]
            names[str(r.get("judge") or "judge")] += 1
    return verdicts, (names.most_common(1)[0][0] if names else None)


def judge_from_file(run_dir: str | os.PathLike[str],
                    pairs: Sequence[CounterfactualPair]) -> tuple[dict[str, bool] | None, str | None]:
    """The verdicts ``cfaug evaluate`` stored in ``RUN_DIR/judgements.jsonl`` for ``pairs`` (a verdict on
    a text that has changed since is left out); (None, None) when there is no such file."""
    stored = read_judgements(run_dir)
    if not stored:
        return None, None
    current = {p.item_id: text_hash(p.judge_input) for p in pairs if p.item_id is not None}
    fresh = [v for item, v in stored.items() if item in current and v.get("text_sha1") in (None, current[item])]
    return judge_from_rows(fresh)


def review_figures(run_dir: str | os.PathLike[str], pairs: Sequence[CounterfactualPair],
                   judgements: Iterable[Mapping[str, Any]] | None = None,
                   *, stored_judgements: bool = False) -> dict[str, Any] | None:
    """:func:`human_figures` for the rows ``pairs`` of ``run_dir`` (pairs read from that run directory,
    so they carry item ids), or None when its review store holds no live decision.

    The judge's verdicts are ``judgements`` (rows as ``cfaug evaluate`` writes them), else with
    ``stored_judgements`` those in ``RUN_DIR/judgements.jsonl``; no judge comparison without either."""
    if not has_decisions(run_dir):
        return None
    with ReviewStore(run_dir, create=False) as store:
        decisions = list(store.current().values())
    rows = {p.item_id: p.method for p in pairs if p.item_id is not None}
    if judgements is not None:
        judge, name = judge_from_rows(judgements)
        judge = judge or None
    elif stored_judgements:
        judge, name = judge_from_file(run_dir, pairs)
    else:
        judge, name = None, None
    out = human_figures(decisions, rows, judge, name)
    out["store"] = str(Path(run_dir) / "review.sqlite")
    return out


def summary_lines(figures: Mapping[str, Any]) -> list[str]:
    """A few lines for a terminal: reviewed rows, human flip rate, the judge's precision and recall."""
    rows, flip = figures["rows"], figures["flip_rate"]
    n_ann = len(figures["annotators"])
    lines = [f"review: {rows['reviewed']} of {rows['in_scope']} rows reviewed by {n_ann} annotator"
             f"{'s' if n_ann != 1 else ''}"
             + (f" ({rows['decisions_on_other_rows']} decisions on rows not scored)"
                if rows["decisions_on_other_rows"] else "")]
    if flip["value"] is not None:
        lines.append(f"human flip rate {flip['value']:.1%} ({flip['flipped']} of {flip['n']} rows judged flipped; "
                     f"{flip['rejected_only']} only rejected, {flip['ties']} tie{'s' if flip['ties'] != 1 else ''} "
                     "left out)")
    else:
        lines.append("human flip rate: n/a (no row judged flipped or not flipped yet)")
    j = figures.get("judge")
    if j and j["n"]:
        p = "n/a" if j["precision"] is None else f"{j['precision']:.1%}"
        r = "n/a" if j["recall"] is None else f"{j['recall']:.1%}"
        lines.append(f"judge {j['name'] or ''} vs people on {j['n']} rows: precision {p} "
                     f"({j['true_positive']} of {j['true_positive'] + j['false_positive']} it called flipped), "
                     f"recall {r} ({j['true_positive']} of {j['true_positive'] + j['false_negative']} people "
                     "called flipped)")
    elif j is not None:
        lines.append("judge vs people: no row both judged and decided")
    ag = figures.get("agreement")
    if ag:
        k = ag.get("cohen_kappa") if ag.get("cohen_kappa") is not None else ag.get("krippendorff_alpha")
        label = "Cohen's kappa" if ag.get("cohen_kappa") is not None else "Krippendorff's alpha"
        lines.append(f"annotator agreement on {ag['shared_items']} shared rows: {label} "
                     + ("n/a" if k is None else f"{k:.3f}"))
    return lines
