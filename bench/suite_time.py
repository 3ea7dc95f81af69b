"""How long the README's test command takes: ``python -m pytest -rs`` (two worker processes, as pyproject's
``addopts`` says), run once from the repository root.

    python bench/suite_time.py                 # writes bench/suite_time.results.md
    python bench/suite_time.py -- -m "not ray" # extra arguments after -- go to pytest

The results file gives the command, the wall seconds measured from outside, pytest's own count of passed,
failed and skipped tests and its time, the 1-minute load average before and after (a loaded machine runs the
suite slower), the cores, and the slowest tests pytest listed. docs/development.md quotes its figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("suite_time.results.md")
#: pytest's last line: "2,146 passed, 12 skipped in 640.12s (0:10:40)"
SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s")
SLOW = re.compile(r"^(?P<seconds>[\d.]+)s (?P<when>call|setup|teardown)\s+(?P<test>\S+)")


def counts(line: str) -> dict[str, int]:
    """``{"passed": 2146, "skipped": 12}`` from the counts part of pytest's summary line."""
    return {kind: int(n.replace(",", "")) for n, kind in re.findall(r"(\d[\d,]*) (\w+)", line)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=str(RESULTS), help="results file (default: %(default)s)")
    parser.add_argument("--slowest", type=int, default=15, help="slowest tests listed (default 15)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "pytest", "-rs", "--durations=40", *args.pytest_args]
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()[0]
    out = proc.stdout + proc.stderr
    found = [m for m in (SUMMARY.search(line) for line in out.splitlines()) if m]
    if not found:
        print(out[-4000:], file=sys.stderr)
        print("no pytest summary line found", file=sys.stderr)
        return 1
    summary = found[-1]
    tally = counts(summary.group("counts"))
    slow = [m for m in (SLOW.match(line.strip()) for line in out.splitlines()) if m][: args.slowest]
    shown = "python -m pytest -rs" + "".join(" " + shlex.quote(a) for a in args.pytest_args)
    lines = [
        "# The test suite's duration",
        "",
        f"Command: `{shown}` from the repository root, written by `python bench/suite_time.py"
        + ("".join(" " + shlex.quote(a) for a in (["--", *args.pytest_args] if args.pytest_args else []))) + "`.",
        "",
        "| measured | value |",
        "|---|---|",
        f"| date (UTC) | {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M')} |",
        f"| machine | {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()} |",
        f"| load average (1 min) before / after | {load_before:.2f} / {load_after:.2f} |",
        f"| tests | {', '.join(f'{n:,} {k}' for k, n in tally.items())} |",
        f"| pytest's time | {float(summary.group('seconds')):.0f} s ({float(summary.group('seconds')) / 60:.1f} min) |",
        f"| wall time, measured from outside | {wall:.0f} s ({wall / 60:.1f} min) |",
        f"| exit code | {proc.returncode} |",
        "",
        f"The {len(slow)} slowest steps (pytest `--durations`):",
        "",
        "| seconds | step | test |",
        "|---:|---|---|",
        *(f"| {float(m.group('seconds')):.1f} | {m.group('when')} | `{m.group('test')}` |" for m in slow),
        "",
    ]
    Path(args.results).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if proc.returncode == 0 else proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
