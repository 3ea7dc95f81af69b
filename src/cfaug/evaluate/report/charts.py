"""Inline SVG bar charts (no plotting library, no external files): label counts per series."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")


def label_bars(title: str, counts: Mapping[str, int], labels: Sequence[str]) -> str:
    """A horizontal bar chart of ``counts`` for ``labels`` (in that order), with counts and shares."""
    total = sum(counts.get(lab, 0) for lab in labels) or 1
    width, bar_h, gap, left, right = 420, 22, 8, 110, 110
    height = 30 + len(labels) * (bar_h + gap)
    biggest = max([counts.get(lab, 0) for lab in labels] + [1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}"><title>{escape(title)}</title>',
             f'<text x="0" y="16" class="chart-title">{escape(title)}</text>']
    for i, lab in enumerate(labels):
        n = counts.get(lab, 0)
        y = 26 + i * (bar_h + gap)
        w = (width - left - right) * n / biggest
        parts.append(f'<text x="{left - 6}" y="{y + bar_h - 6}" text-anchor="end">{escape(lab)}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(f'<text x="{left + w + 6:.1f}" y="{y + bar_h - 6}">{n} ({100 * n / total:.1f}%)</text>')
    parts.append("</svg>")
    return "".join(parts)
