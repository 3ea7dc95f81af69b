"""What a run reports at its end: the :class:`RunSummary` (printed by the CLI, saved as ``summary.json``
and in the manifest) and the collect step that turns finished result lines into output rows and figures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cfaug.data.records import WorkItem


@dataclass
class RunSummary:
    """End-of-run figures, printed by the CLI and saved as ``summary.json``."""

    rows_read: int = 0
    rows_rejected: int = 0
    #: which rows ``--limit`` took, e.g. ``20 of 60: a seeded sample balanced by label (seed 0); ids in
    #: RUN_DIR/rows_taken.json``; empty when every valid row was taken
    rows_taken: str = ""
    items: int = 0
    items_resumed: int = 0
    #: the other cfaug builds (``cfaug 0.1.0 (code sha256:...)``) that made reused items; [] when this build
    #: made them all (see :meth:`cfaug.run.runner.Runner.earlier_builds`)
    resumed_from: list[str] = field(default_factory=list)
    items_without_counterfactual: int = 0
    #: why items got no counterfactual (reason -> items), one reason per item: as the method said, or the
    #: filters that rejected every candidate; the counts sum to ``items_without_counterfactual``
    without_reasons: dict[str, int] = field(default_factory=dict)
    items_failed: int = 0
    first_error: str | None = None  #: the error of the first failed item, in input order (``Type: message``)
    counterfactuals_written: int = 0
    candidates_filtered_out: int = 0
    #: share of the kept counterfactuals that the method's own judge counts as flipped
    flip_rate_own_judge: float | None = None
    own_judge: str | None = None
    #: the P(target) at or above which the own judge counts a rewrite as flipped (None: not a threshold, or unknown)
    own_judge_threshold: float | None = None
    #: share of the kept counterfactuals whose own-judge P(target) is above 0.5 (None: no probabilities)
    own_judge_above_half: float | None = None
    seconds: float = 0.0
    peak_memory_mb: float = 0.0
    run_dir: str = ""
    output: str | None = None
    rejects_file: str | None = None
    #: which input column played which role (``text=Text, label=Sentiment, id=id``)
    input_columns: str = ""
    columns: list[str] = field(default_factory=list)  #: the output's columns, in order
    extra: dict[str, Any] = field(default_factory=dict)
    #: whether every work item has a result (failed items count as done); False when the run stopped early
    complete: bool = True
    stop_reason: str | None = None  #: why the run stopped early (the error), when it did
    items_not_done: int = 0  #: work items without a result; a rerun of the same command does them

    def lines(self) -> list[str]:
        out = [
            f"rows read              {self.rows_read}",
            *([f"columns used           {self.input_columns}"] if self.input_columns else []),
            f"rows rejected          {self.rows_rejected}" + (f"  (see {self.rejects_file})" if self.rows_rejected else ""),
            *([f"rows taken             {self.rows_taken}"] if self.rows_taken else []),
            f"work items             {self.items}" + (f"  ({self.items_resumed} already done"
                                                          + (f", by {'; '.join(self.resumed_from)}"
                                                             if self.resumed_from else "") + ")"
                                                          if self.items_resumed else ""),
            f"counterfactuals        {self.counterfactuals_written}",
            f"filtered out           {self.candidates_filtered_out}",
            f"items with none        {self.items_without_counterfactual}",
        ]
        groups = group_reasons(self.without_reasons)
        for g in groups[:REASON_GROUPS_SHOWN]:
            out.append(f"  {g.count:>5}  {g.describe()}")
        rest = groups[REASON_GROUPS_SHOWN:]
        if rest:
            out.append(f"  {sum(g.count for g in rest):>5}  other reasons, of {len(rest)} more kinds")
        if rest or any(len(g.reasons) > 1 for g in groups):
            out.append("         (each reason in full: summary.json in the run directory)")
        if self.items_failed:
            first = f"first: {_shorten(self.first_error)}; " if self.first_error else ""
            out.append(f"items failed           {self.items_failed}  ({first}errors in results.jsonl)")
        if self.flip_rate_own_judge is not None:
            out.append(f"flip rate, own judge   {self.own_judge_figure()}")
        for k, v in self.extra.items():
            out.append(f"{k:<22} {v}")
        out.append(f"time                   {self.seconds:.1f} s  (peak memory {self.peak_memory_mb:.0f} MB)")
        out.append(f"run directory          {self.run_dir}")
        if self.output:
            out.append(f"output                 {self.output}" + (" (standard output)" if self.output == "-" else ""))
        if self.complete and self.items_failed:
            out.append(f"status                 complete, with FAILED ITEMS: {self.items_failed} of {self.items} "
                       + ("failed and no counterfactual was written" if not self.counterfactuals_written else
                          "failed") + "; --retry-failed runs them again")
        elif self.complete:
            out.append("status                 complete")
        else:
            out.append(f"status                 INCOMPLETE: stopped early, {self.items_not_done} of {self.items} items "
                       "not done" + (" (partial output written)" if self.output else "")
                       + "; rerun the same command to resume")
        return out

    def own_judge_figure(self) -> str:
        """The own-judge flip rate with the threshold behind it and the share above 0.5, e.g.
        ``45.0% with P(target) >= 0.90 (tfidf-logreg; 83.3% above 0.5)``; empty without a flip rate."""
        if self.flip_rate_own_judge is None:
            return ""
        text = f"{self.flip_rate_own_judge:.1%}"
        if self.own_judge_threshold is not None:
            t = self.own_judge_threshold
            text += f" with P(target) >= {t:.2f}" if round(t, 2) == t else f" with P(target) >= {t:g}"
        notes = [self.own_judge] if self.own_judge else []
        if self.own_judge_above_half is not None:
            notes.append(f"{self.own_judge_above_half:.1%} " + ("above 0.5" if self.own_judge_threshold is not None
                                                                else "with P(target) above 0.5"))
        return text + (f" ({'; '.join(notes)})" if notes else "")


def collect_results(items: Sequence[WorkItem], done: dict[str, dict[str, Any]],
                    keep_failed: bool) -> tuple[list[dict[str, Any]], RunSummary]:
    """The output rows of the finished ``items`` in input order (candidates a filter rejected only with
    ``keep_failed``) and the summary figures they give; the runner adds the rest of the summary."""
    rows: list[dict[str, Any]] = []
    s = RunSummary(items=len(items))
    judged = flipped = probed = above_half = 0
    thresholds: set[float] = set()
    for it in items:
        line = done.get(it.key)
        if line is None:
            continue
        if line["status"] == "error":
            s.items_failed += 1
            continue
        if line["status"] == "no_counterfactual":
            s.items_without_counterfactual += 1
            reason = why_none(line)
            s.without_reasons[reason] = s.without_reasons.get(reason, 0) + 1
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
                if isinstance(own.get("threshold"), (int, float)):
                    thresholds.add(float(own["threshold"]))
                if isinstance(own.get("target_prob"), (int, float)):
                    probed += 1
                    above_half += own["target_prob"] > 0.5
    s.counterfactuals_written = len(rows)
    s.flip_rate_own_judge = flipped / judged if judged else None
    # one threshold decided every verdict: name it (several, e.g. a resumed run with a new setting: none)
    s.own_judge_threshold = thresholds.pop() if len(thresholds) == 1 else None
    s.own_judge_above_half = above_half / probed if probed else None
    return rows, s


def why_none(line: dict[str, Any]) -> str:
    """The reason of a ``no_counterfactual`` result line: the one it carries, or (a line written without
    one) the one its rejected candidates give (:func:`~cfaug.run.results.no_counterfactual_reason`)."""
    from cfaug.run.results import no_counterfactual_reason

    return str(line.get("reason") or no_counterfactual_reason([row.get("meta") for row in line.get("counterfactuals")
                                                               or []]))


#: kinds of reasons listed one by one in the summary; the rest are counted on one line
REASON_GROUPS_SHOWN = 8
#: what stands for a part that varies between reasons of one kind (a number, a quoted word)
VARIES = "\u2026"
#: the parts of a reason that vary between items: a quoted span, or a number (with a sign, decimals, %)
_VARYING = re.compile(r"""(?P<q>(?<!\w)'[^'\n]*'(?!\w)|"[^"\n]*"|\u201c[^\u201d\n]*\u201d|\u2018[^\u2019\n]*\u2019)"""
                      r"|(?P<n>(?<![\w.])[-+]?\d+(?:[.,]\d+)*%?(?!\w))")


def reason_kind(reason: str) -> tuple[str, list[str]]:
    """The kind of a reason for "no counterfactual" and the parts that made it differ: every quoted span
    and every number replaced by :data:`VARIES` (quotes kept), e.g. ``the classifier gives the source
    label 0.07`` -> (``the classifier gives the source label \u2026``, ``["0.07"]``). Reasons that differ
    only in such parts have one kind."""
    values: list[str] = []

    def placeholder(m: re.Match[str]) -> str:
        values.append(m.group(0))
        return f"{m.group('q')[0]}{VARIES}{m.group('q')[-1]}" if m.group("q") else VARIES

    return _VARYING.sub(placeholder, reason), values


@dataclass
class ReasonGroup:
    """The reasons of one kind (:func:`reason_kind`): how many items gave them, and each reason with its
    count (most frequent first)."""

    kind: str
    count: int
    reasons: dict[str, int]

    @property
    def label(self) -> str:
        """The reason itself when all items gave the same one, else the kind."""
        return next(iter(self.reasons)) if len(self.reasons) == 1 else self.kind

    def examples(self) -> list[str]:
        """What filled the varying parts (joined by ", ") of two reasons: the most frequent one and the last
        (the least frequent; by text on a tie), so the two show a spread; [] when all items gave the same
        reason."""
        if len(self.reasons) == 1:
            return []
        texts = list(self.reasons)
        return [", ".join(reason_kind(r)[1]) for r in (texts[0], texts[-1])]

    def describe(self) -> str:
        """The label with two examples of what varies, e.g. ``the classifier gives the source label \u2026
        (e.g. \u2026 = 0.07; 0.41)``."""
        ex = self.examples()
        return self.label + (f"  (e.g. {VARIES} = {'; '.join(ex)})" if ex else "")


def group_reasons(reasons: dict[str, int]) -> list[ReasonGroup]:
    """``reasons`` (reason -> items) grouped by kind (:func:`reason_kind`), the kinds with most items first
    (ties by kind); the counts of the groups add up to those of ``reasons``."""
    by_kind: dict[str, dict[str, int]] = {}
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        by_kind.setdefault(reason_kind(reason)[0], {})[reason] = n
    groups = [ReasonGroup(kind, sum(texts.values()), texts) for kind, texts in by_kind.items()]
    return sorted(groups, key=lambda g: (-g.count, g.kind))


def _shorten(text: str, limit: int = 160) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
