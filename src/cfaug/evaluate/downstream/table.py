"""The downstream table: one row per training condition, one column per test set, accuracy in percent
as mean ± sample standard deviation over seeds."""

from __future__ import annotations

from cfaug.evaluate.downstream.harness import DownstreamResult


def markdown_table(result: DownstreamResult) -> str:
    tests = list(result.tests)
    head = "| training data | rows | " + " | ".join(f"{t} ({result.tests[t]['kind'] or 'test'}, "
                                                   f"{result.tests[t]['rows']})" for t in tests) + " |"
    lines = [head, "|" + "---|" * (len(tests) + 2)]
    for cond, info in result.conditions.items():
        cells = []
        for t in tests:
            mean, sd = result.summary(cond, t)
            cells.append(f"{100 * mean:.1f} ± {100 * sd:.1f}")
        lines.append(f"| {cond} | {info['rows']} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Accuracy (%), mean ± sample std over seeds {', '.join(map(str, result.seeds))}; "
                 f"classifier {result.classifier}; settings chosen on the dev set ({result.dev['source']}, "
                 f"{result.dev['rows']} rows).")
    return "\n".join(lines)
