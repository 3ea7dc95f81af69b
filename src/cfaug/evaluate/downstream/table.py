"""The downstream table: one row per training condition, one column per test set, accuracy in percent
as mean ± sample standard deviation over seeds (one value where every seed gave the same)."""

from __future__ import annotations

from cfaug.evaluate.downstream.harness import DownstreamResult


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
    lines.append(f"{what}; classifier {result.classifier}; settings chosen on the dev set ({result.dev['source']}, "
                 f"{result.dev['rows']} rows).")
    return "\n".join(lines)
