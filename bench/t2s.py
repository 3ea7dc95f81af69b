"""Target-to-source augmentation for ASTE end to end on CPU: the pipeline's cost at a reduced scale, and
the ASTE model's F1 with and without each augmentation (the paper's Tables 2 and 4, Figures 4 and 5).

Per domain (``14res`` with Yelp sentences as unlabelled data, ``14lap`` with the SemEval-2016 laptop
sentences):

1. ``cfaug train t2s --task aste`` on the ASTE-Data-V2 training set (dev set for the extractor's epoch),
   timed stage by stage; then ``cfaug augment`` with ``--keep-failed`` so that every candidate and its scores
   are kept (the default selection is the rows that passed).
2. Augmented sets: T2S (the passing rows); *no PPO* (the same training stage's supervised generator);
   *each training sentence's own label* with a pool template (``label_source=record``);
   *templates and labels from the training set only* (``label_source=train template_source=train``);
   *self-training* (pseudo-labelled pool sentences as augmentation, as many as t2s kept but at least half the
   training set); EDA with the label's terms protected (one version of every training sentence).
   Mask-then-fill and conditional augmentation need a pretrained masked or infilling language model, which
   is not available offline: they are reported as not run.
3. The ASTE model trained here (:class:`cfaug.aste.GridTagger`) on train + each set, ``--seeds`` seeds, test F1
   mean and standard deviation, under each of ``--schemes``: *mix* (trained on train + the set) and
   *finetune* (that model then fine-tuned on train alone); the ``f1_gain`` lines use ``--gain-scheme``
   (finetune, chosen on the dev sets: see the README). With ``--figures`` also Figure 4 (candidates chosen by
   alignment or fluency score band) and Figure 5 (number of augmented sentences) on 14res.

Every stage is cached under ``bench/_work/t2s/``; a rerun skips what is done.

    python bench/t2s.py                      # the documented run (both domains; about 80 minutes on 2 cores
                                             # when the two domains run as two processes, see --domains)
    python bench/t2s.py --quick              # smoke run: tiny scale, one seed

Writes ``bench/t2s.results.md`` with the lines ``f1_gain_14res=`` and ``f1_gain_14lap=``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "bench" / "_work" / "t2s"
UNLABELED = {"14res": "yelp-sentences/yelp_sentences.tsv", "14lap": "aste-unlabeled/laptop_semeval16_sentences.txt"}


def cfaug(*args: Any, log: Path) -> float:
    """Run ``python -m cfaug ARGS`` (output to ``log``); returns seconds."""
    t = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n$ cfaug {' '.join(map(str, args))}\n")
        fh.flush()
        subprocess.run([sys.executable, "-m", "cfaug", *map(str, args)], check=True, stdout=fh, stderr=fh,
                       env={**os.environ, "CFAUG_MODEL_STORE": str(WORK / "store"), "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - t


def cached(path: Path, make: Any) -> Any:
    if path.exists():
        return json.loads(path.read_text())
    value = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1))
    return value


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def examples_of(rows: list[dict[str, Any]]) -> list[Any]:
    from cfaug.data.aste import AsteExample, parse_triplets

    return [AsteExample(tuple(r["text"].split()), parse_triplets(r["label"]), id=str(k)) for k, r in enumerate(rows)]


def pipeline(domain: str, data: Path, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """Train t2s and generate, timed; returns facts."""
    d = WORK / domain
    d.mkdir(parents=True, exist_ok=True)
    src = data / "aste-v2" / domain
    model = d / "model"
    params = ["-p", f"unlabeled={data / UNLABELED[domain]}", "-p", f"unlabeled_max={args.unlabeled}",
              "-p", f"dev_data={src / 'dev_triplets.txt'}", "-p", f"ppo_steps={args.ppo_steps}",
              "-p", f"ppo_lr={args.ppo_lr}",
              "-p", f"generator_epochs={args.generator_epochs}", "-p", f"mixed_pairs={args.mixed_pairs}"]
    gen = ["-p", f"candidates={args.candidates}", "-p", f"keep={args.keep}"]

    def train() -> dict[str, Any]:
        if (model / "artifact.json").exists():  # trained by an earlier, interrupted run of this script
            return {"seconds": json.loads((model / "artifact.json").read_text()).get("seconds"),
                    "note": "seconds of the last training session only"}
        seconds = cfaug("train", "t2s", "--task", "aste", "--train-data", src / "train_triplets.txt", "-o", model,
                        "--no-progress", "--seed", "0", *params, log=log)
        return {"seconds": round(seconds, 1)}

    facts: dict[str, Any] = {"train": cached(d / "train.json", train)}
    facts["stages"] = json.loads((model / "stages.json").read_text())

    def augment(name: str, model_dir: Path, extra: tuple[str, ...] = (), sampling: list[str] = gen) -> dict[str, Any]:
        out = d / f"{name}.jsonl"
        seconds = cfaug("augment", src / "train_triplets.txt", "--task", "aste", "--method", "t2s", "--model",
                        model_dir, "-o", out, "--keep-failed", "--no-progress", "--seed", "0", "--run-dir",
                        d / f"run-{name}", "--overwrite", *params, *sampling, *extra, log=log)
        rows = read_rows(out)
        return {"seconds": round(seconds, 1), "candidates": len(rows),
                "passed": sum(1 for r in rows if r["meta"].get("passed"))}

    facts["t2s"] = cached(d / "aug-t2s.json", lambda: augment("t2s", model))
    if domain == "14res" and args.figures:  # a larger production for Figure 5 (number of augmented sentences)
        facts["t2s_many"] = cached(d / "aug-t2s-many.json", lambda: augment(
            "t2s-many", model, sampling=["-p", f"candidates={args.figure_candidates}", "-p", f"keep={args.figure_keep}"]))
    if domain not in args.ablation_domains:
        return facts
    nosl = d / "model-no-ppo"
    if not nosl.exists():
        shutil.copytree(model, nosl, ignore=shutil.ignore_patterns("ppo", "generator_ckpt", "extractor_ckpt"))
        shutil.rmtree(nosl / "generator")
        shutil.copytree(model / "generator_sl", nosl / "generator")
    facts["no_ppo"] = cached(d / "aug-no-ppo.json", lambda: augment("no-ppo", nosl))
    facts["own_label"] = cached(d / "aug-own-label.json", lambda: augment(
        "own-label", model, ("-p", "label_source=record")))
    facts["train_only"] = cached(d / "aug-train-only.json", lambda: augment(
        "train-only", model, ("-p", "label_source=train", "-p", "template_source=train")))
    return facts


def term_check(rows: list[dict[str, Any]]) -> float:
    """Share of rows whose every aspect and opinion term occurs in the sentence (independent of the
    discriminators: the label sequence's words are looked up in the text)."""
    from cfaug.data.aste import find_term, parse_label_sequence

    ok = 0
    for r in rows:
        tokens = r["text"].split()
        terms = parse_label_sequence(r["meta"]["label_sequence"])
        ok += all(find_term(tokens, a) is not None and find_term(tokens, o) is not None for a, o, _ in terms)
    return 100.0 * ok / max(1, len(rows))


def evaluate(domain: str, data: Path, args: argparse.Namespace) -> dict[str, Any]:
    from cfaug.data.aste import read_aste
    from cfaug.evaluate.downstream.aste import eda_aste, run_seeds, summarize
    from cfaug.methods.t2s.pool import read_pool

    d = WORK / domain
    src = data / "aste-v2" / domain
    train = read_aste(src / "train_triplets.txt")
    dev = read_aste(src / "dev_triplets.txt")
    test = read_aste(src / "test_triplets.txt")
    def passed(name: str) -> list[dict[str, Any]]:
        path = d / f"{name}.jsonl"
        return [r for r in read_rows(path) if r["meta"].get("passed")] if path.exists() else []

    from cfaug.data.aste import AsteExample, parse_triplets

    kept = passed("t2s")
    pool_path = d / "model" / "pool.jsonl"
    pool = [e for e in read_pool(pool_path) if e["source"] == "pseudo"] if pool_path.exists() else []
    random.Random(0).shuffle(pool)
    sets = {"none": [], "eda": eda_aste(train, n_aug=1, seed=0), "t2s": examples_of(kept)}
    if domain in args.ablation_domains:
        sets.update({"no_ppo": examples_of(passed("no-ppo")), "own_label": examples_of(passed("own-label")),
                     "train_only": examples_of(passed("train-only")),
                     "self_training": [AsteExample(tuple(e["tokens"]), parse_triplets(e["triplets"]), id=e["id"])
                                       for e in pool[: max(len(kept), len(train) // 2)]]})
    seeds = list(range(args.seeds))
    out: dict[str, Any] = {"sizes": {k: len(v) for k, v in sets.items()}}
    for scheme in args.schemes:
        for name, extra in sets.items():
            key = name if scheme == "mix" or name == "none" else f"{name}+ft"
            if key in out:
                continue  # no augmentation is the same under both schemes
            if args.sets and name not in args.sets and not (d / f"f1-{key}.json").exists():
                continue  # another process evaluates it (--sets)
            n_seeds = seeds if name in ("none", "eda", "t2s") else seeds[: args.ablation_seeds]
            if name != "none" and not extra and "none" in out:
                # nothing kept: training on the same data with the same seeds would repeat the baseline's runs
                runs = [r for r in out["none"]["runs"] if r["seed"] in n_seeds]
            else:
                runs = cached(d / f"f1-{key}.json", lambda: run_seeds(train, test, n_seeds, dev=dev, extra=extra,
                                                                      finetune=scheme == "finetune"))
            mean, std = summarize(runs)
            out[key] = {"runs": runs, "f1": mean, "std": std, "p": summarize(runs, "precision")[0],
                        "r": summarize(runs, "recall")[0]}
    out["term_check"] = term_check(kept)
    if domain == "14res" and args.figures:
        everything = [r for r in read_rows(d / "t2s.jsonl") if r["meta"]["filters"].get("terms")]
        fig: dict[str, Any] = {}
        ft = "+ft" if args.gain_scheme == "finetune" else ""
        n = min(len(kept), len(everything) // 3)
        for score in ("alignment", "fluency"):
            ranked = sorted(everything, key=lambda r: r["meta"][score])
            bands = {"low": ranked[:n], "medium": ranked[len(ranked) // 2 - n // 2: len(ranked) // 2 + n - n // 2],
                     "high": ranked[-n:]}
            for band, rows in bands.items():
                runs = cached(d / f"fig4-{score}-{band}{ft}.json",
                              lambda: run_seeds(train, test, seeds[:args.figure_seeds], dev=dev, extra=examples_of(rows),
                                                finetune=args.gain_scheme == "finetune"))
                fig[f"{score}/{band}"] = summarize(runs)
        many = passed("t2s-many")
        ranked = sorted(many, key=lambda r: -(r["meta"]["alignment"] + r["meta"]["fluency"]))
        for size in args.sizes:
            if size > len(ranked):
                continue
            runs = cached(d / f"fig5-{size}{ft}.json", lambda: run_seeds(train, test, seeds[:args.figure_seeds], dev=dev,
                                                                         finetune=args.gain_scheme == "finetune",
                                                                    extra=examples_of(ranked[:size])))
            fig[f"size/{size}"] = summarize(runs)
        fig.update(candidates_with_terms=len(everything), band_size=n, many_passed=len(many))
        out["figures"] = fig
    return out


SCHEMES = {"mix": "mixed", "finetune": "fine-tuned"}


def gain_key(name: str, args: argparse.Namespace) -> str:
    """The results key of an augmentation set under the scheme of the f1_gain lines."""
    return name if args.gain_scheme == "mix" else f"{name}+ft"


def examples_table(domain: str, k: int = 10) -> list[str]:
    rows = [r for r in read_rows(WORK / domain / "t2s.jsonl") if r["meta"].get("passed")]
    random.Random(3).shuffle(rows)
    lines = ["| label | template from | generated sentence | alignment | fluency |", "|---|---|---|---:|---:|"]
    for r in rows[:k]:
        m = r["meta"]
        lines.append(f"| {m['label_sequence'].replace('|', '/')} | {m['template_parent']} | {r['text']} | {m['alignment']:.2f} | "
                     f"{m['fluency']:.2f} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--domains", nargs="+", default=["14res", "14lap"])
    ap.add_argument("--unlabeled", type=int, default=20000)
    ap.add_argument("--ppo-steps", type=int, default=150)
    ap.add_argument("--ppo-lr", type=float, default=2e-5)
    ap.add_argument("--generator-epochs", type=int, default=10)
    ap.add_argument("--mixed-pairs", type=int, default=3000)
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--keep", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--ablation-seeds", type=int, default=2)
    ap.add_argument("--figure-seeds", type=int, default=1)
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--figure-candidates", type=int, default=32,
                    help="candidates per training sentence of the larger production Figure 5 draws from")
    ap.add_argument("--figure-keep", type=int, default=4, help="sentences kept per training sentence there")
    ap.add_argument("--ablation-domains", nargs="*", default=["14res", "14lap"],
                    help="domains that also get the Table 4 ablations (no PPO, training labels and templates only, "
                         "self-training)")
    ap.add_argument("--figures", action="store_true", help="also the score-band and size studies on 14res")
    ap.add_argument("--schemes", nargs="+", choices=("mix", "finetune"), default=["mix", "finetune"],
                    help="how the ASTE model uses each augmentation: mix (trained on train + augmented) and/or "
                         "finetune (then fine-tuned on train alone)")
    ap.add_argument("--gain-scheme", choices=("mix", "finetune"), default="finetune",
                    help="the scheme of the f1_gain lines and the figures (chosen on the dev sets, see the README)")
    ap.add_argument("--stage", choices=("pipeline", "evaluate", "all"), default="all")
    ap.add_argument("--sets", nargs="*", default=None,
                    help="evaluate only these augmentation sets (none eda t2s no_ppo own_label train_only "
                         "self_training), to split the evaluation over processes; results are cached, a final run without it reports all")
    ap.add_argument("--quick", action="store_true", help="tiny smoke run")
    ap.add_argument("--note", default="", help="a paragraph for the results file (e.g. how the stages were run)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "t2s.results.md")
    args = ap.parse_args()
    if args.gain_scheme not in args.schemes:
        ap.error(f"--gain-scheme {args.gain_scheme} is not among --schemes {' '.join(args.schemes)}")
    global WORK
    if args.quick:
        WORK = WORK.with_name("t2s-quick")
        args.unlabeled, args.ppo_steps, args.generator_epochs, args.mixed_pairs = 300, 3, 1, 100
        args.seeds, args.ablation_seeds, args.figure_seeds, args.sizes = 1, 1, 1, [50]
        args.candidates, args.keep = 2, 1
    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / "log.txt"
    facts: dict[str, Any] = {}
    for domain in args.domains:
        t0 = time.perf_counter()
        facts[domain] = {"pipeline": pipeline(domain, args.data, args, log)}
        if args.stage in ("evaluate", "all"):
            facts[domain]["eval"] = evaluate(domain, args.data, args)
        facts[domain]["bench_seconds"] = round(time.perf_counter() - t0, 1)
    (WORK / "facts.json").write_text(json.dumps(facts, indent=1))
    if args.stage != "pipeline":
        write_results(facts, args)
    return 0


def write_results(facts: dict[str, Any], args: argparse.Namespace) -> None:
    import torch

    cmd = " ".join(["python bench/t2s.py", *sys.argv[1:]])
    lines = ["# Target-to-source augmentation for ASTE (bench/t2s.py)", "",
             f"Command: `{cmd}`  ", f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python "
             f"{platform.python_version()}, torch {torch.__version__}, no GPU.  ",
             f"Scale: {args.unlabeled} unlabelled sentences read per domain, {args.ppo_steps} PPO steps, "
             f"{args.candidates} candidates per training sentence, {args.keep} kept; ASTE model: cfaug's grid "
             "tagger (default configuration); the number of seeds of each row is in its table.", ""]
    if args.note:
        lines += [args.note, ""]
    for domain, f in facts.items():
        p, e = f["pipeline"], f.get("eval", {})
        st = p["stages"]
        lines += [f"## {domain}", "", "### Pipeline", "",
                  f"Training stage {p['train']['seconds'] / 60:.1f} min (its last session when resumed); generation {p['t2s']['seconds'] / 60:.1f} "
                  f"min for {p['t2s']['candidates']} candidates ({p['t2s']['passed']} passed).  ",
                  f"Extractor dev F1 {st['extractor'].get('dev_f1', 0):.1f} ({st['extractor'].get('seconds', 0) / 60:.1f} "
                  f"min); pool {st['pool']['pool']} sentences "
                  f"({st['pool'].get('pseudo', {}).get('kept', 0)} pseudo-labelled of "
                  f"{st['pool'].get('pseudo', {}).get('sentences', 0)}); generator "
                  f"{st['generator_sl']['parameters']:,} parameters, {st['generator_sl']['seconds'] / 60:.1f} min.  ",
                  f"PPO: {json.dumps(st['ppo'])}", ""]
        if not e:
            continue
        none = e["none"]["f1"]
        lines += ["### ASTE F1 on test (Table 2 and Table 4)", "",
                  "Training: *mixed* -- the ASTE model is trained on train + the augmented sentences; *fine-tuned* -- "
                  "that model is then trained on train alone from its weights (`run_seeds(..., finetune=True)`).", "",
                  "| augmentation | sentences | training | seeds | P | R | F1 mean ± std | Δ F1 |",
                  "|---|---:|---|---:|---:|---:|---:|---:|"]
        names = {"none": "no augmentation", "eda": "EDA (terms protected)", "t2s": "target-to-source",
                 "no_ppo": "t2s without PPO",
                 "own_label": "t2s, each training sentence's own label with a pool template (label_source=record)",
                 "train_only": "t2s, labels and templates of the training set only",
                 "self_training": "self-training (pseudo-labelled sentences)"}
        for key, label in names.items():
            if key not in e["sizes"]:
                continue  # not part of this domain's run (--ablation-domains)
            if key != "none" and e["sizes"][key] == 0:
                lines.append(f"| {label} | 0 | – | – | – | – | nothing kept: the same data as no augmentation | |")
                continue
            for scheme in args.schemes:
                if key == "none" and scheme != args.schemes[0]:
                    continue  # no augmentation trains the same way under both schemes
                k = key if scheme == "mix" or key == "none" else f"{key}+ft"
                how = "" if key == "none" else SCHEMES[scheme]
                if k not in e:
                    lines.append(f"| {label} | {e['sizes'][key]} | {how} | – | – | – | not evaluated in this run | |")
                    continue
                r = e[k]
                lines.append(f"| {label} | {e['sizes'][key]} | {how} | {len(r['runs'])} | {r['p']:.2f} | {r['r']:.2f} | "
                             f"{r['f1']:.2f} ± {r['std']:.2f} | {r['f1'] - none:+.2f} |")
        lines += ["| mask-then-fill | – | – | – | – | – | not run: needs a pretrained masked LM (none offline) | |",
                  "| conditional augmentation | – | – | – | – | – | not run: needs a pretrained infilling LM | |", "",
                  f"Kept sentences containing every aspect and opinion term of their label: {e['term_check']:.1f}%.", ""]
        if "figures" in e:
            fig = e["figures"]
            base = [r["f1"] for r in e["none"]["runs"] if r["seed"] < args.figure_seeds]
            base_f1 = sum(base) / len(base)
            lines += ["### Figures 4 and 5 (14res)", "",
                      f"Figure 4: the candidates of the main production that hold every term of their label "
                      f"({fig['candidates_with_terms']}), sorted by alignment or by fluency score; "
                      f"{fig['band_size']} of them from the low end, the middle or the high end are the augmented "
                      f"set. Figure 5: the best n by alignment + fluency of a larger production "
                      f"({args.figure_candidates} candidates per training sentence, at most {args.figure_keep} kept: "
                      f"{fig['many_passed']} passed). Training: {SCHEMES[args.gain_scheme]}, seeds "
                      f"{', '.join(map(str, range(args.figure_seeds)))}; no augmentation with the same seeds: "
                      f"{base_f1:.2f} (Δ F1 against it).", "",
                      "| selection | F1 | Δ F1 |", "|---|---:|---:|"]
            lines += [f"| {k} | {v[0]:.2f} ± {v[1]:.2f} | {v[0] - base_f1:+.2f} |"
                      for k, v in fig.items() if isinstance(v, (list, tuple))]
            lines.append("")
        lines += ["### Ten kept sentences", "", *examples_table(domain), ""]
    for domain in ("14res", "14lap"):
        if domain in facts and "eval" in facts[domain]:
            e = facts[domain]["eval"]
            lines.append(f"f1_gain_{domain}={e[gain_key('t2s', args)]['f1'] - e['none']['f1']:.2f}")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.out.read_text())


if __name__ == "__main__":
    sys.exit(main())
