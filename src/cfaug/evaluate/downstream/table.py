"""The downstream table: one row per training condition, one column per test set, accuracy in percent
as mean ± sample standard deviation over seeds (one value where every seed gave the same); below it how
each condition's settings were chosen, and a warning for every model that predicted (nearly) one label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cfaug.evaluate.downstream.harness import DownstreamResult, describe_warning

#: what ``fit`` reports that is not a setting of the classifier
CHOICE_FACTS = ("selection", "score", "metric", "dev_accuracy", "selection_rows", "selection_note", "grid_scores",
                "dev", "dev_rows", "dev_loss", "seed")


def settings_text(info: Mapping[str, Any]) -> str:
    """The settings in one model's ``fit`` facts, e.g. ``C=1, ngram_max=2`` (``epoch=3`` for the neural ones)."""
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in info.items() if k not in CHOICE_FACTS)


def choice_score(info: Mapping[str, Any]) -> float | None:
    """The score one model's settings were chosen on: ``score`` (the TF-IDF classifiers' balanced
    accuracy), else ``dev_accuracy`` (the neural ones' best epoch); None when nothing was scored."""
    v = info.get("score", info.get("dev_accuracy"))
    return float(v) if isinstance(v, (int, float)) else None


def how_chosen(info: Mapping[str, Any]) -> str:
    """How one model's settings were chosen, in words (the default's reason included)."""
    how = str(info.get("selection") or ("held-out training rows" if info.get("dev") else "dev set"))
    if choice_score(info) is None and info.get("selection_note"):
        how += f": {info['selection_note']}"
    return how


def chosen_lines(chosen: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """One line per training condition: each setting the seeds chose, how, and its score per seed, e.g.
    ``- original: C=1, ngram_max=2 with seeds 0, 1, 2 (5-fold cross-validation; balanced accuracy 0.812,
    0.808, 0.815)``."""
    lines = []
    for cond, runs in chosen.items():
        groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for r in runs:
            groups.setdefault((settings_text(r), how_chosen(r)), []).append(r)
        parts = []
        for (settings, how), rs in groups.items():
            seeds = ", ".join(str(r.get("seed")) for r in rs)
            scores = ", ".join(f"{v:.3f}" for v in map(choice_score, rs) if v is not None)
            metric = rs[0].get("metric") or "accuracy"
            parts.append(f"{settings or 'settings'} with seed{'s' if len(rs) > 1 else ''} {seeds} ({how}"
                         + (f"; {metric} {scores}" if scores else "") + ")")
        lines.append(f"- {cond}: " + "; ".join(parts))
    return lines


def markdown_table(result: DownstreamResult) -> str:
    """The table with a note on what the cells are. A cell where every seed gave the same accuracy (a
    deterministic classifier, or one seed) shows that one value, not "± 0.0"."""
    tests = list(result.tests)
    head = "| training data | rows | " + " | ".join(f"{t} ({result.tests[t]['kind'] or 'test'}, "
                                                   f"{result.tests[t]['rows']})" for t in tests) + " |"
    lines = [head, "|" + "---|" * (len(tests) + 2)]
    several = len(result.seeds) > 1
    agreed = {(c, t): len(set(result.accuracy[c][t])) == 1 for c in result.conditions for t in tests}
    everywhere = all(agreed.values())
    for cond, info in result.conditions.items():
        cells = []
        for t in tests:
            mean, sd = result.summary(cond, t)
            if not agreed[(cond, t)]:
                cells.append(f"{100 * mean:.1f} ± {100 * sd:.1f}")
            elif several and not everywhere:
                cells.append(f"{100 * mean:.1f} (same for every seed)")
            else:
                cells.append(f"{100 * mean:.1f}")
        lines.append(f"| {cond} | {info['rows']} | " + " | ".join(cells) + " |")
    lines.append("")
    seeds = ", ".join(map(str, result.seeds))
    if not several:
        what = f"Accuracy (%) with seed {seeds}"
    elif everywhere:
        what = (f"Accuracy (%): every seed ({seeds}) gave the same accuracy (the classifier is deterministic on "
                "these data), so each cell shows that one value")
    else:
        what = f"Accuracy (%), mean ± sample std over seeds {seeds}"
    dev = f"dev set {result.dev['source']}, {result.dev['rows']} rows" if result.dev.get("rows") else "no dev set"
    lines.append(f"{what}; classifier {result.classifier} ({dev}). Settings chosen:")
    lines.append("")
    lines += chosen_lines(result.chosen)
    if result.warnings:
        lines += ["", "Warnings:"] + [f"- {describe_warning(w)}" for w in result.warnings]
    return "\n".join(lines)
