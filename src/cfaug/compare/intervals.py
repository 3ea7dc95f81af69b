"""95% intervals for the rates of the summary, and which methods the ranking cannot tell from the leader.

Each rate is a share of counted units: coverage and flipped coverage of the sampled rows, the flip rate of
the counterfactuals. Its interval is the Wilson score interval (:func:`wilson_interval`), which stays
inside [0, 1] and is sound for shares near 0 or 1 and for few units, where the normal approximation is not.

A finished method whose interval of the ranked figure (flipped coverage; coverage without a judge)
overlaps the leader's is marked ``tied_with_leader``: on these rows the data do not establish which of
the two delivers more, so their order in the ranking is not a finding.
"""

from __future__ import annotations

import math
from typing import Any

#: z for a two-sided 95% interval
Z95 = 1.959963984540054
#: each rate of a summary entry -> the entry field that counts its units
RATES = {"coverage": "rows", "flipped_coverage": "rows", "flip_rate": "counterfactuals"}


def wilson_interval(successes: int, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval ``[lo, hi]`` of ``successes`` out of ``n`` (None when ``n`` is 0)."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)]


def rate_interval(rate: Any, n: Any) -> list[float] | None:
    """The interval of a share ``rate`` of ``n`` units (the count recovered as ``round(rate * n)``); None
    when either is missing."""
    if not isinstance(rate, (int, float)) or not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    return wilson_interval(int(round(rate * n)), n)


def add_intervals(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with ``<rate>_ci`` beside each rate of :data:`RATES` (None where the rate is)."""
    for rate, units in RATES.items():
        entry[f"{rate}_ci"] = rate_interval(entry.get(rate), entry.get(units))
    return entry


def ranked_figure(entries: list[dict[str, Any]]) -> str:
    """The figure the ranking orders by: ``flipped_coverage`` when some finished method has one, else
    ``coverage``."""
    ok = [e for e in entries if e.get("status") == "ok"]
    return "flipped_coverage" if any(e.get("flipped_coverage") is not None for e in ok) else "coverage"


def mark_ties(ranked: list[dict[str, Any]]) -> str | None:
    """Set ``tied_with_leader`` on every entry of ``ranked`` (in ranked order): for a finished method after
    the first, whether its interval of the ranked figure overlaps the leader's; None for the leader and
    the methods that did not finish. Returns the sentence that says so (None with fewer than two
    finished methods)."""
    figure = ranked_figure(ranked)
    ok = [e for e in ranked if e.get("status") == "ok"]
    for e in ranked:
        e["tied_with_leader"] = None
    if len(ok) < 2:
        return None
    leader = ok[0]
    lead = leader.get(f"{figure}_ci")
    tied = []
    for e in ok[1:]:
        ci = e.get(f"{figure}_ci")
        e["tied_with_leader"] = bool(lead and ci and ci[1] >= lead[0] and ci[0] <= lead[1])
        if e["tied_with_leader"]:
            tied.append(e["method"])
    name = figure.replace("_", " ")
    if not tied:
        return (f"No method's {name} 95% interval overlaps the leader's ({leader['method']}): its lead is more "
                "than these rows' noise.")
    return (f"≈ marks {', '.join(tied)}: {'its' if len(tied) == 1 else 'their'} {name} 95% interval overlaps the "
            f"leader's ({leader['method']}), so these rows do not tell {'it' if len(tied) == 1 else 'them'} "
            "apart from the leader.")
