"""How long a new user waits for the first calls: ``cfaug --help``, ``cfaug methods`` and ``cfaug augment`` on
five rows with the default method (auto-cad, default settings).

    python bench/first_call.py                                   # the working tree
    git archive HEAD src | tar -x -C /tmp/base                   # an older src/ to compare with ...
    python bench/first_call.py --baseline-src /tmp/base/src --baseline-label "HEAD"   # ... run alternately

Every timing is a fresh process started the way a user starts it (the ``cfaug`` script installed beside this
Python; with ``--baseline-src`` that tree goes first on ``PYTHONPATH``), measured from outside: wall seconds and
the CPU seconds (user + system) of the process. Cases:

- ``cfaug --help`` and ``cfaug methods``;
- ``augment, cold``: a new cache folder (``XDG_CACHE_HOME``: empty model store and embedding cache), i.e. a
  first call on a new machine, on the first five rows of the packaged demo sample (``resources/demo``);
- ``augment, warm``: the same command again (the model store now holds its classifier and vectors);
- ``augment, new input``: the next five rows of the sample with that cache (what every new input costs).

Two bytecode settings: ``cached`` (compiled modules kept, as after any installation: ``PYTHONPYCACHEPREFIX``
set to a folder under ``bench/_work`` that an untimed warm-up fills) and ``none`` (``PYTHONDONTWRITEBYTECODE=1``
with no such folder: cfaug's own modules, installed in editable mode, are compiled again by every call; the
installed libraries keep their bytecode). ``--augment-bytecode`` says in which settings augment is timed
(default: ``cached``).

Repeats alternate between the code trees, so both see the same load; the results file gives the best and the
median of each case, the 1-minute load average before every run, and whether the cold and warm runs wrote the
same output. It is ``bench/first_call.results.md``; raw figures go to ``bench/_work/first_call/``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "first_call"
RESULTS = HERE / "first_call.results.md"
SAMPLE = ROOT / "src" / "cfaug" / "resources" / "demo" / "reviews.tsv"
ROWS = 5


def cfaug_command() -> list[str]:
    """The ``cfaug`` script beside this Python (what a user's shell runs), else ``python -m cfaug``."""
    script = Path(sys.executable).with_name("cfaug")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cfaug"]


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The first five rows of the demo sample, and the next five."""
    with open(SAMPLE, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        fields, rows = list(reader.fieldnames or []), list(reader)
    out = []
    for name, part in (("five.tsv", rows[:ROWS]), ("next_five.tsv", rows[ROWS:2 * ROWS])):
        path = folder / name
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, delimiter="\t")
            w.writeheader()
            w.writerows(part)
        out.append(path)
    return out[0], out[1]


def environment(src: Path | None, bytecode: str, cache: Path | None, pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CFAUG_MODEL_STORE", "CFAUG_EMBEDDING_CACHE", "CFAUG_VOTE_CACHE", "PYTHONPYCACHEPREFIX",
                        "PYTHONDONTWRITEBYTECODE")}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if bytecode == "cached":
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return env


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Run ``cmd``; wall and CPU seconds (user + system of the process and its children)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}:\n{proc.stderr[-3000:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load": round(load, 2)}


def run_facts(output: Path) -> dict:
    """What the run says of itself: whether it trained, its training and total seconds, a digest of the output."""
    run_dir = Path(str(output) + ".run")
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    training = (manifest.get("method_facts") or {}).get("training") or {}
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    return {"trained_now": training.get("trained_now"), "fit_s": training.get("fit_seconds"),
            "run_s": round(summary.get("seconds") or 0.0, 2), "counterfactuals": len(rows),
            "output": [{k: r[k] for k in ("Text", "Sentiment", "source_id")} | {"meta": r["meta"]} for r in rows]}


def measure(codes: list[tuple[str, Path | None]], args: argparse.Namespace, inputs: tuple[Path, Path]) -> list[dict]:
    cmd = cfaug_command()
    records: list[dict] = []
    modes = ["cached", "none"] if args.bytecode == "both" else [args.bytecode]
    augment_modes = [m for m in modes if m in args.augment_bytecode.split(",")]
    for label, src in codes:  # untimed warm-up: fills the bytecode folder (kept in bench/_work between runs)
        with tempfile.TemporaryDirectory() as tmp:
            env = environment(src, "cached", WORK / "warm-up-cache", WORK / "pycache")
            print(f"warm-up ({label}) ...", file=sys.stderr)
            timed(cmd + ["methods", "-v"], env, Path(tmp))
            timed(cmd + ["augment", str(inputs[0]), "-o", str(Path(tmp) / "w.jsonl"), "--no-progress"], env, Path(tmp))
    for rep in range(max(args.repeats, args.augment_repeats)):  # alternate everything, so all see the same load
        for mode in modes if rep < args.repeats else []:
            for label, src in codes:
                env = environment(src, mode, None, WORK / "pycache")
                for case, extra in (("cfaug --help", ["--help"]), ("cfaug methods", ["methods"])):
                    r = timed(cmd + extra, env, ROOT)
                    records.append({"case": case, "code": label, "bytecode": mode, "repeat": rep, **r})
                    print(f"{mode} {label} {case}: {r}", file=sys.stderr)
        for mode in augment_modes if rep < args.augment_repeats else []:
            for label, src in codes:
                with tempfile.TemporaryDirectory() as tmp:
                    cache = Path(tmp) / "cache"  # new model store and embedding cache
                    env = environment(src, mode, cache, WORK / "pycache")
                    outputs = {}
                    for case, source, name in (("cfaug augment, cold", inputs[0], "cold.jsonl"),
                                               ("cfaug augment, warm", inputs[0], "warm.jsonl"),
                                               ("cfaug augment, new input", inputs[1], "new.jsonl")):
                        out = Path(tmp) / name
                        r = timed(cmd + ["augment", str(source), "-o", str(out)], env, Path(tmp))
                        facts = run_facts(out)
                        outputs[case] = facts.pop("output")
                        records.append({"case": case, "code": label, "bytecode": mode, "repeat": rep, **r, **facts})
                        print(f"{mode} {label} {case}: {r} {facts}", file=sys.stderr)
                    records[-2]["same_output_as_cold"] = outputs["cfaug augment, warm"] == outputs["cfaug augment, cold"]
                    (WORK / f"output-{label_slug(label)}-{mode}-{rep}.json").write_text(
                        json.dumps(outputs, indent=1, ensure_ascii=False), encoding="utf-8")
    return records


def label_slug(label: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in label).strip("-").lower() or "code"


def git_state() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
        return rev + (" + uncommitted changes under src/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (f"{cpu}; {cores} CPU cores; Python {platform.python_version()}; torch {version('torch')}, "
            f"scikit-learn {version('scikit-learn')}, spaCy {version('spacy')}; {platform.system()} "
            f"{platform.release()}")


def render(records: list[dict], run: dict) -> str:
    """The results file from the timings of one run of this script and what it recorded of that run."""
    codes = [(label, src) for label, src in run["codes"]]
    cases = ["cfaug --help", "cfaug methods", "cfaug augment, cold", "cfaug augment, warm", "cfaug augment, new input"]
    order = [label for label, _ in codes]
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in sorted(records, key=lambda r: (cases.index(r["case"]), r["bytecode"], order.index(r["code"]))):
        groups.setdefault((r["case"], r["bytecode"], r["code"]), []).append(r)
    lines = ["# First calls: `cfaug --help`, `cfaug methods`, `cfaug augment` on five rows", "",
             f"Command: `{run['command']}` (run {run['started']}; code: {', '.join(label for label, _ in codes)}; "
             f"the working tree is {run['git']})."
             + ("".join(f" `{label}` is the `src/` folder {src} (an export of a commit's `src/`: `git archive COMMIT src | "
                       f"tar -x -C DIR`), first on `PYTHONPATH`." for label, src in codes[1:])),
             "",
             "Each figure is a fresh process, timed from outside; wall and CPU seconds (user + system). "
             "`augment` runs auto-cad with its default settings on the first five rows of the packaged demo "
             "sample: *cold* with a new cache folder (empty model store and embedding cache, a first call on a "
             "new machine), *warm* the same command again, *new input* the next five rows with that cache. "
             "Bytecode *cached*: compiled modules kept (as after an installation); *none*: "
             "`PYTHONDONTWRITEBYTECODE=1` and no compiled copy of cfaug's own modules, so each call compiles "
             "them. The machine's other work shows in the load average (1 minute, 2 cores) before each run; "
             "compare the CPU seconds when it was high.", "",
             "| case | bytecode | code | runs | best wall s | median wall s | median CPU s | load average (min-max) "
             "| notes |",
             "|---|---|---|---:|---:|---:|---:|---|---|"]
    for (case, mode, code), rs in groups.items():
        walls = [r["wall_s"] for r in rs]
        cpus = [r["cpu_s"] for r in rs]
        loads = [r["load"] for r in rs]
        notes = []
        if "trained_now" in rs[0]:
            trained = {r["trained_now"] for r in rs}
            notes.append("trained the classifier" if trained == {True} else
                         "loaded from the model store" if trained == {False} else "mixed")
            fits = [r["fit_s"] for r in rs if r.get("trained_now")]
            if fits:
                notes.append(f"training {statistics.median(fits):.1f} s (median)")
            notes.append(f"run {statistics.median(r['run_s'] for r in rs):.1f} s in the process (median)")
        if "same_output_as_cold" in rs[0]:
            same = all(r["same_output_as_cold"] for r in rs)
            notes.append("output identical to the cold run's" if same else "OUTPUT DIFFERS from the cold run's")
        lines.append(f"| {case} | {mode} | {code} | {len(rs)} | {min(walls):.2f} | {statistics.median(walls):.2f} | "
                     f"{statistics.median(cpus):.2f} | {min(loads):.2f}-{max(loads):.2f} | {'; '.join(notes)} |")
    lines += ["", "Every run, in order:", "", "| # | case | bytecode | code | wall s | CPU s | load average before |",
              "|---:|---|---|---|---:|---:|---:|"]
    for i, r in enumerate(records, 1):
        lines.append(f"| {i} | {r['case']} | {r['bytecode']} | {r['code']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{r['load']:.2f} |")
    lines += ["", "Machine: " + run["machine"] + ".", ""]
    for (case, mode, code), rs in groups.items():
        if case == "cfaug augment, cold" and mode == "cached" and code == codes[0][0]:
            lines.append(f"first_call_augment_cold_median_s={statistics.median(r['wall_s'] for r in rs):.2f}")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of --help and methods per code tree and bytecode "
                                                           "setting (default 5)")
    ap.add_argument("--augment-repeats", type=int, default=3, help="cold/warm/new-input rounds per code tree "
                                                                   "(default 3)")
    ap.add_argument("--bytecode", choices=("cached", "none", "both"), default="both")
    ap.add_argument("--augment-bytecode", default="cached", help="bytecode settings in which augment is timed, "
                                                                 "comma-separated (default: cached)")
    ap.add_argument("--baseline-src", help="a src/ folder of other code to time as well (alternating with the "
                                           "working tree), e.g. from `git archive HEAD src | tar -x -C DIR`")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--label", default="working tree")
    ap.add_argument("--render-only", action="store_true", help="write the results file again from the timings of "
                                                              "the last run (bench/_work/first_call/records.json)")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    stored = WORK / "records.json"
    if args.render_only:
        data = json.loads(stored.read_text(encoding="utf-8"))
        RESULTS.write_text(render(data["records"], data["run"]), encoding="utf-8")
        print(RESULTS.read_text(encoding="utf-8"))
        return 0
    codes: list[tuple[str, Path | None]] = [(args.label, None)]
    if args.baseline_src:
        codes.append((args.baseline_label, Path(args.baseline_src).resolve()))
    run = {"started": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "command": "python bench/first_call.py" + (" " + shlex.join(sys.argv[1:]) if sys.argv[1:] else ""),
           "codes": [(label, str(src) if src else None) for label, src in codes], "git": git_state(),
           "machine": machine()}
    inputs_dir = WORK / "inputs"
    if inputs_dir.exists():
        shutil.rmtree(inputs_dir)
    inputs_dir.mkdir(parents=True)
    inputs = write_inputs(inputs_dir)
    records = measure(codes, args, inputs)
    stored.write_text(json.dumps({"run": run, "records": records}, indent=1), encoding="utf-8")
    RESULTS.write_text(render(records, run), encoding="utf-8")
    print(RESULTS.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
