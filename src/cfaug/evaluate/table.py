"""Plain-text rendering of an evaluation result for the terminal."""

from __future__ import annotations

from typing import Any


def metrics_table(result: dict[str, Any]) -> str:
    """One line per (group, metric): value, direction, n and signature."""
    lines = [f"{'group':<16} {'metric':<22} {'value':>10}  {'n':>6}  signature"]
    for group, g in result["groups"].items():
        for m in g["metrics"]:
            v = m["value"]
            val = "n/a" if v is None else f"{v:.4f}"
            arrow = "^" if m["higher_is_better"] else "v"
            note = "" if m["settings"].get("independent", True) else "  (not independent)"
            ratio = (m.get("details") or {}).get("ratio_to_original")
            if ratio is not None:
                note += f"  (originals {m['details']['originals_perplexity']:.1f}; rewrite/original {ratio:.2f})"
            lines.append(f"{group[:16]:<16} {m['name']:<22} {val:>10}{arrow} {m['n']:>6}  {m['signature']}{note}")
    return "\n".join(lines)
