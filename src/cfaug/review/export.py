"""Reviewed rows out: the counterfactuals people kept, in any output format, each with ``meta.review``.

Which rows: those whose combined decision is one of the chosen decisions (default ``accepted`` and
``edited``). An edited row carries the annotator's text in its text column(s). A row exported under
``not_flipped`` carries its original label, one under ``other_label`` the label the annotator named
(people said that is the label the rewrite has).

Several annotators on one item are combined by **majority**: each annotator's live decision is a vote
(``skipped`` is no vote; ``other_label`` votes count per label named); the decision with the most votes
wins; a tie between the most voted is not exported and is counted (``ties``). When the winner is
``edited`` and several annotators edited, the latest edit is the text exported (``meta.review.edit_by``).

``meta.review``::

    {"annotators": [...],            # everyone whose decision counted
     "decision": "edited",
     "votes": {"edited": 2, "accepted": 1},
     "time": "2026-01-01T12:00:00Z", # when the latest deciding decision was recorded (UTC)
     "seconds": 8.5,                 # median time the deciding annotators spent, when the client measured it
     "edit": {"Text": {"changes": [{"at": 2, "old": "bad", "new": "awful"}], "token_edit_rate": 0.25}},
     "edit_by": "ann",
     "label": "neutral"}             # only when the exported label is not the machine's target

``edit`` (None unless edited) maps each edited column to the changes made to the machine's text (word
diff by :func:`cfaug.nlp.word_diff.word_diff`; ``at`` is the character offset in the machine's text,
``old`` the text replaced, ``new`` what replaced it) and their size (token edit rate of the machine's
text to the edited one, :func:`cfaug.nlp.tokens.token_edit_rate`).

**Per annotator** (:func:`export_decisions`, ``cfaug review export --per-annotator``): instead of the
combined rows, every annotator's live decision, one row each (skips included): who decided what on which
item, when, with the edited text or the label named, and ``combined``, the decision the combined export
takes for the item (``"tie"`` when it leaves the item out, None when every annotator skipped it). Ties can
be resolved from it by hand.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cfaug.data.io import DataError, write_rows
from cfaug.nlp.tokens import token_edit_rate
from cfaug.nlp.word_diff import word_diff
from cfaug.review.items import Item, ItemSet, load_items
from cfaug.run.decisions import DECISIONS, STORE_FILE, Decision, ReviewStore

DEFAULT_DECISIONS = ("accepted", "edited")
#: decisions a row can be exported under (a skip is no decision about the row)
EXPORTABLE = tuple(d for d in DECISIONS if d != "skipped")
#: formats beside which a dataset card (README.md) is written
CARD_FORMATS = ("hf", "parquet")


class NothingToExport(DataError):
    """No row has one of the chosen decisions (or no decision was recorded at all)."""


@dataclass
class Verdict:
    """The combined decision on one item: ``decision`` is None on a tie; ``deciding`` are the decisions
    that voted for the winner (latest last); ``annotators`` everyone who voted."""

    item: str
    decision: str | None
    label: str | None
    votes: dict[str, int]
    annotators: list[str]
    deciding: list[Decision]


def vote_key(d: Decision) -> str:
    """What one decision votes for: the decision, with the label named for ``other_label``."""
    return f"other_label:{d.label}" if d.decision == "other_label" else d.decision


def combine(decisions: Iterable[Decision]) -> Verdict | None:
    """Majority of the live decisions of one item (one per annotator); None when all were skips."""
    votes = [d for d in decisions if d.decision != "skipped"]
    if not votes:
        return None
    counts = Counter(vote_key(d) for d in votes)
    ranked = counts.most_common()
    item = votes[0].item
    annotators = sorted({d.annotator for d in votes})
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return Verdict(item, None, None, dict(counts), annotators, [])
    key = ranked[0][0]
    deciding = sorted((d for d in votes if vote_key(d) == key), key=lambda d: d.seq)
    decision, _, label = key.partition(":")
    return Verdict(item, decision, label or None, dict(counts), annotators, deciding)


def verdicts(current: Mapping[tuple[str, str], Decision]) -> dict[str, Verdict | None]:
    """The combined decision per item from :meth:`ReviewStore.current` (None: only skips)."""
    by_item: dict[str, list[Decision]] = {}
    for (item, _), d in current.items():
        by_item.setdefault(item, []).append(d)
    return {item: combine(ds) for item, ds in by_item.items()}


@dataclass
class ExportSummary:
    """What an export wrote and left out. ``by_decision``: rows written per decision; ``ties``: items
    whose annotators were split evenly (not written); ``not_chosen``: items decided otherwise;
    ``only_skipped``: items every annotator skipped; ``unknown_items``: decisions on ids that are not
    rows of the run (first few); ``card``: the dataset card written, if any."""

    output: str
    format: str
    rows: int = 0
    by_decision: dict[str, int] = field(default_factory=dict)
    ties: int = 0
    not_chosen: int = 0
    only_skipped: int = 0
    unknown_items: list[str] = field(default_factory=list)
    unknown_count: int = 0
    annotators: list[str] = field(default_factory=list)
    agreement: dict[str, Any] | None = None
    card: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"output": self.output, "format": self.format, "rows": self.rows, "by_decision": self.by_decision,
                "ties": self.ties, "not_chosen": self.not_chosen, "only_skipped": self.only_skipped,
                "unknown_items": self.unknown_count, "annotators": self.annotators, "agreement": self.agreement,
                "card": self.card}


def parse_decisions(text: str | Sequence[str], allowed: Sequence[str] = EXPORTABLE) -> tuple[str, ...]:
    """``"accepted,edited"`` -> ("accepted", "edited"); a name not in ``allowed`` raises ValueError naming it."""
    names = [x.strip() for x in (text.split(",") if isinstance(text, str) else text) if x.strip()]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise ValueError(f"unknown decision {bad[0]!r} in --decisions; choose from {', '.join(allowed)}"
                         if bad else "--decisions names no decision")
    return tuple(dict.fromkeys(names))


def reviewed_rows(items: ItemSet, current: Mapping[tuple[str, str], Decision],
                  decisions: Sequence[str] = DEFAULT_DECISIONS) -> tuple[list[dict[str, Any]], ExportSummary]:
    """The rows to export (in the run's order) and the counts; ``summary.output``/``format`` left empty."""
    summary = ExportSummary(output="", format="")
    chosen = set(decisions)
    by_id = items.by_id()
    combined = verdicts(current)
    surfaces = _label_surfaces(items)
    summary.annotators = sorted({a for (_, a) in current})
    rows = []
    order = {it.id: n for n, it in enumerate(items.items)}
    for item_id in sorted(combined, key=lambda i: order.get(i, len(order))):
        v = combined[item_id]
        if item_id not in by_id:
            summary.unknown_count += 1
            if len(summary.unknown_items) < 5:
                summary.unknown_items.append(item_id)
            continue
        if v is None:
            summary.only_skipped += 1
        elif v.decision is None:
            summary.ties += 1
        elif v.decision not in chosen:
            summary.not_chosen += 1
        else:
            rows.append(_row(by_id[item_id], v, items, surfaces))
            summary.by_decision[v.decision] = summary.by_decision.get(v.decision, 0) + 1
    summary.rows = len(rows)
    return rows, summary


def _row(item: Item, v: Verdict, items: ItemSet, surfaces: dict[str, str]) -> dict[str, Any]:
    row = dict(item.row)
    meta = dict(row.get("meta")) if isinstance(row.get("meta"), dict) else {}
    last = v.deciding[-1]
    seconds = [d.seconds for d in v.deciding if d.seconds is not None]
    review: dict[str, Any] = {
        "annotators": v.annotators, "decision": v.decision, "votes": v.votes,
        "time": datetime.fromtimestamp(last.time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(statistics.median(seconds), 3) if seconds else None, "edit": None}
    if v.decision == "edited" and last.fields:
        edit = {}
        for role, text in last.fields.items():
            col = items.columns.text.get(role)
            if col is None or role not in item.rewrite:
                continue
            machine = item.rewrite[role]
            row[col] = text
            edit[col] = {"changes": text_changes(machine, text), "token_edit_rate": round(token_edit_rate(machine, text), 4)}
        review["edit"] = edit
        review["edit_by"] = last.annotator
    label = None
    if v.decision == "not_flipped":
        label = item.source_label
        if items.columns.original_label in row:
            row[items.columns.label] = row[items.columns.original_label]
    elif v.decision == "other_label" and v.label:
        label = v.label
        row[items.columns.label] = surfaces.get(label, label)
    if label is not None:
        review["label"] = label
    meta["review"] = review
    row["meta"] = meta
    return row


def text_changes(machine: str, edited: str) -> list[dict[str, Any]]:
    """The edits turning ``machine`` into ``edited``: ``at`` (offset in ``machine``), ``old``, ``new``."""
    out: list[dict[str, Any]] = []
    pos = 0
    for seg in word_diff(machine, edited):
        if seg.op == "equal":
            pos += len(seg.text)
            continue
        if out and out[-1]["at"] + len(out[-1]["old"]) == pos and (seg.op == "insert" or not out[-1]["new"]):
            change = out[-1]  # a delete followed by an insert at the same place: one replacement
        else:
            change = {"at": pos, "old": "", "new": ""}
            out.append(change)
        if seg.op == "delete":
            change["old"] += seg.text
            pos += len(seg.text)
        else:
            change["new"] += seg.text
    return out


def _label_surfaces(items: ItemSet) -> dict[str, str]:
    """Canonical label -> how the run's rows spell it (``Negative`` for ``negative``)."""
    return items.label_surfaces()


def output_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Columns in the rows' own order (the output contract's), ``meta`` last."""
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    cols.pop("meta", None)
    return [*cols, "meta"]


#: the columns of a per-annotator export, in order
DECISION_COLUMNS = ("item", "source_id", "method", "source_label", "target_label", "annotator", "decision", "label",
                    "edited", "time", "seconds", "combined")


@dataclass
class DecisionsSummary:
    """What a per-annotator export wrote: ``rows`` (one per live decision of an annotator), ``by_decision``,
    the ``annotators``, the ``items`` decided and of those the ``ties`` (left out of the combined export)."""

    output: str
    format: str
    rows: int = 0
    by_decision: dict[str, int] = field(default_factory=dict)
    annotators: list[str] = field(default_factory=list)
    items: int = 0
    ties: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"output": self.output, "format": self.format, "rows": self.rows, "by_decision": self.by_decision,
                "annotators": self.annotators, "items": self.items, "ties": self.ties}


def decision_rows(items: ItemSet, current: Mapping[tuple[str, str], Decision],
                  decisions: Sequence[str] = DECISIONS) -> tuple[list[dict[str, Any]], DecisionsSummary]:
    """One row per live decision in ``current`` whose decision is one of ``decisions`` (see the module
    docstring), in the run's order of items, then by annotator; ``summary.output``/``format`` left empty."""
    chosen = set(decisions)
    by_id = items.by_id()
    combined = verdicts(current)
    order = {it.id: n for n, it in enumerate(items.items)}
    summary = DecisionsSummary(output="", format="")
    rows = []
    for (item_id, who), dec in sorted(current.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][1])):
        if dec.decision not in chosen:
            continue
        item = by_id.get(item_id)
        v = combined.get(item_id)
        edited = None
        if dec.fields:
            edited = {items.columns.text.get(role, role): text for role, text in dec.fields.items()}
        rows.append({
            "item": item_id, "source_id": None if item is None else item.source_id,
            "method": None if item is None else item.method,
            "source_label": None if item is None else item.source_label,
            "target_label": None if item is None else item.target_label,
            "annotator": who, "decision": dec.decision, "label": dec.label, "edited": edited,
            "time": datetime.fromtimestamp(dec.time, timezone.utc).isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
            "seconds": dec.seconds,
            "combined": None if v is None else "tie" if v.decision is None else v.decision})
        summary.by_decision[dec.decision] = summary.by_decision.get(dec.decision, 0) + 1
    summary.rows = len(rows)
    summary.annotators = sorted({r["annotator"] for r in rows})
    decided = {r["item"]: r["combined"] for r in rows}
    summary.items = len(decided)
    summary.ties = sum(1 for c in decided.values() if c == "tie")
    return rows, summary


def export_decisions(run_dir: str | os.PathLike[str], output: str | os.PathLike[str], *,
                     decisions: Sequence[str] = DECISIONS, fmt: str | None = None) -> DecisionsSummary:
    """Write every annotator's live decision on ``run_dir``'s items (one row each, :func:`decision_rows`) to
    ``output``, in any output format but ASTE (from ``fmt`` or the name); no dataset card.

    Raises :class:`NothingToExport` when no live decision is one of ``decisions`` (nothing is written),
    and otherwise as :func:`export_reviewed`."""
    from cfaug.run.outputs import output_lock

    run_dir = Path(run_dir)
    out, kind = _checked_output(run_dir, output, fmt, "review decisions")
    with output_lock(out):
        items = load_items(run_dir, include_failed=True)
        current = _live_decisions(run_dir)
        rows, summary = decision_rows(items, current, decisions)
        summary.output, summary.format = str(out), kind
        if not rows:
            raise NothingToExport(f"{run_dir}: no live decision is {' or '.join(decisions)} ({len(current)} decided "
                                  "otherwise); nothing written; choose others with --decisions")
        write_rows(rows, out, kind, columns=list(DECISION_COLUMNS))
    return summary


def _checked_output(run_dir: Path, output: str | os.PathLike[str], fmt: str | None,
                    what: str) -> tuple[str | Path, str]:
    """An export's output as written (``-`` stays standard output) and its format (from ``fmt`` or the name);
    refused before anything is read when it is ASTE (it cannot hold ``what``) or when writing it could destroy
    something (:func:`~cfaug.run.outputs.check_output`: nothing inside ``run_dir``)."""
    from cfaug.data.io import output_kind
    from cfaug.run.outputs import check_output, is_stdout

    out: str | Path = output if is_stdout(output) else Path(output)
    kind = output_kind(out, fmt, "--format")
    if kind == "aste":
        raise DataError(f"{out}: the ASTE format holds sentences with triplets, not {what}; choose jsonl, csv, "
                        "tsv, parquet or hf")
    check_output(output, "-o", read_dirs=[("", run_dir)], folder=kind == "hf", file=kind != "hf", stdout=True)
    return out, kind


def _live_decisions(run_dir: Path) -> dict[tuple[str, str], Decision]:
    """The live decisions of ``run_dir``'s store; :class:`NothingToExport` when there are none."""
    if not (run_dir / STORE_FILE).exists():
        raise NothingToExport(f"{run_dir}: no review decisions yet (no {STORE_FILE}); review the run first with "
                              f"'cfaug review serve {run_dir}' (or import Label Studio annotations)")
    with ReviewStore(run_dir, create=False) as store:
        current = store.current()
        recorded = bool(current) or bool(store.history())
    if not current:
        why = "every decision recorded was undone" if recorded else "no decision recorded yet"
        raise NothingToExport(f"{run_dir / STORE_FILE}: {why}; nothing to export (review the run with "
                              f"'cfaug review serve {run_dir}')")
    return current


def export_reviewed(run_dir: str | os.PathLike[str], output: str | os.PathLike[str], *,
                    decisions: Sequence[str] = DEFAULT_DECISIONS, fmt: str | None = None,
                    license: str | None = None) -> ExportSummary:
    """Write the reviewed rows of ``run_dir`` to ``output`` (format from ``fmt`` or the name, as ``cfaug
    augment -o``) and, for a Hugging Face dataset or Parquet file, its own dataset card
    (:func:`cfaug.review.card.card_path`: ``README.md`` in the dataset's folder, ``<file>.README.md``).

    Raises :class:`NothingToExport` when the run has no decisions or none of the chosen kind (nothing is
    written then), :class:`~cfaug.data.io.DataError` for a run directory or format that cannot be used,
    :class:`~cfaug.run.decisions.StoreError` for a damaged review store, and
    :class:`~cfaug.run.outputs.OutputRefused` for an output inside ``run_dir`` (before anything is read);
    the output is locked while it is written (:func:`~cfaug.run.outputs.output_lock`)."""
    from cfaug.run.outputs import output_lock

    run_dir = Path(run_dir)
    out, kind = _checked_output(run_dir, output, fmt, "reviewed counterfactuals")
    with output_lock(out):
        return _export(run_dir, out, kind, decisions, license)


def _export(run_dir: Path, out: str | Path, kind: str, decisions: Sequence[str], license: str | None) -> ExportSummary:
    items = load_items(run_dir, include_failed=True)
    current = _live_decisions(run_dir)
    rows, summary = reviewed_rows(items, current, decisions)
    summary.output, summary.format = str(out), kind
    if not rows:
        raise NothingToExport(
            f"{run_dir}: no item has the decision {' or '.join(decisions)} ({_left_out(summary)}); nothing "
            "written; choose others with --decisions")
    write_rows(rows, out, kind, columns=output_columns(rows))
    from cfaug.review.stats import decision_agreement

    summary.agreement = decision_agreement(current).to_dict()
    if kind in CARD_FORMATS:
        from cfaug.review.card import write_card

        summary.card = str(write_card(out, kind, rows, items, summary, license=license))
    return summary


def _left_out(s: ExportSummary) -> str:
    parts = [f"{s.not_chosen} decided otherwise", f"{s.ties} tied", f"{s.only_skipped} only skipped"]
    if s.unknown_count:
        parts.append(f"{s.unknown_count} decisions on ids not in the run, e.g. {s.unknown_items[0]!r}")
    return ", ".join(parts)
