"""95% intervals for the rates of the summary, and which methods the ranking cannot tell from the leader.

Each rate is a share of counted units: coverage and flipped coverage of the sampled rows, the flip rate of
the counterfactuals. Its interval is the Wilson score interval (:func:`wilson_interval`), which stays
inside [0, 1] and is sound for shares near 0 or 1 and for few units, where the normal approximation is not.

Whether a finished method is told apart from the leader is a paired test on the rows they share
(:func:`mark_ties`): for the ranked figure (flipped coverage; coverage without a judge), the rows where
exactly one of the two succeeded are counted (the leader alone, the method alone), and an exact McNemar
test asks whether those discordant rows split evenly. A method with p of 0.05 or more is marked
``tied_with_leader`` (≈ in the tables): on these rows the data do not establish which of the two delivers
more, so their order in the ranking is not a finding. Two 95% intervals can overlap while the paired test
tells the methods apart (rows where both succeed or both fail say nothing of the difference), which is why
the test, not the overlap, decides.
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


#: the level below which the paired test tells a method from the leader
TIE_LEVEL = 0.05
#: the paired test, as the summary names it
PAIRED_TEST = "exact McNemar"


def paired_test(leader_rows: set[str], rows: set[str]) -> dict[str, Any]:
    """The exact McNemar test of two methods on the same rows, from the rows where each succeeded: the
    discordant counts (``leader_only``, ``only_this``) and the two-sided ``p``."""
    from cfaug.compare.downstream import mcnemar_exact

    b, c = len(leader_rows - rows), len(rows - leader_rows)
    return {"test": PAIRED_TEST, "leader_only": b, "only_this": c, "p": mcnemar_exact(b, c)}


def mark_ties(ranked: list[dict[str, Any]], outcomes: dict[str, dict[str, set[str]]] | None = None) -> str | None:
    """Set ``tied_with_leader`` and ``vs_leader`` on every entry of ``ranked`` (in ranked order). ``outcomes``:
    per method, per figure (``flipped_coverage``, ``coverage``), the ids of the sampled rows where it succeeded
    (a counterfactual the judge gives its target; any counterfactual). For a finished method after the first
    with outcomes, ``vs_leader`` holds the paired test of the ranked figure against the leader
    (:func:`paired_test`) and ``tied_with_leader`` whether its p is :data:`TIE_LEVEL` or more; None for the
    leader, for the methods that did not finish and where the outcomes are missing. Returns the sentence that
    says so (None when no method was tested)."""
    figure = ranked_figure(ranked)
    ok = [e for e in ranked if e.get("status") == "ok"]
    for e in ranked:
        e["tied_with_leader"] = None
        e["vs_leader"] = None
    outcomes = outcomes or {}
    if len(ok) < 2 or figure not in outcomes.get(ok[0]["method"], {}):
        return None
    leader = ok[0]
    lead_rows = set(outcomes[leader["method"]][figure])
    tied, tested = [], 0
    for e in ok[1:]:
        rows = (outcomes.get(e["method"]) or {}).get(figure)
        if rows is None:
            continue
        tested += 1
        e["vs_leader"] = {"figure": figure, **paired_test(lead_rows, set(rows))}
        e["tied_with_leader"] = e["vs_leader"]["p"] >= TIE_LEVEL
        if e["tied_with_leader"]:
            tied.append(f"{e['method']} (p {e['vs_leader']['p']:.2f})")
    if not tested:
        return None
    name = figure.replace("_", " ")
    done = "flipped" if figure == "flipped_coverage" else "covered"
    how = f"a paired test ({PAIRED_TEST}, over the rows only one of the two {done})"
    if not tied:
        return (f"On the same rows, {how} tells every other method's {name} from the leader's ({leader['method']}) "
                f"at the {TIE_LEVEL:.0%} level.")
    one = len(tied) == 1
    return (f"≈ marks {', '.join(tied)}: on the same rows, {how} does not tell {'its' if one else 'their'} {name} "
            f"from the leader's ({leader['method']}) at the {TIE_LEVEL:.0%} level, so {'its' if one else 'their'} "
            "place below the leader is not a finding of these rows.")
