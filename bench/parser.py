"""Accuracy and speed of cfaug's bundled English pipeline (``en_ewt``) on the UD English-EWT test split.

    python bench/parser.py                               # default data: ../shared/data/ud-english-ewt
    python bench/parser.py --pipeline PATH_OR_NAME       # any other spaCy pipeline

Accuracy, three ways (scores are aligned to the gold tokens by spaCy's scorer):

* raw text, paragraph by paragraph: each paragraph of the treebank (its ``# newpar`` / ``# newdoc`` marks) is
  one text; the pipeline tokenizes it and finds its sentences. This is the raw-text protocol of the CoNLL
  2018 shared task, whose input files keep paragraph breaks, and the case cfaug meets (one review, one text).
* raw text, 10 sentences run together: blocks of 10 consecutive sentences joined by spaces, across
  paragraph and document breaks (``spacy convert -n 10``); a harder test of sentence splitting.
* gold tokens and sentences.
UPOS = universal part of speech, XPOS = Penn Treebank tag, UAS/LAS = unlabelled/labelled attachment score.

Speed: sentences per second over the test split's sentence texts (each text one sentence, batch 256),
with one process and with two independent processes each parsing half (as cfaug's engines use two
cores), for the full pipeline, without the lemmatizer, and for the tagger alone (what auto-CAD runs).
Every process uses one thread; loading is not timed; each figure is the median of ``--trials`` timings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from cfaug.nlp import describe_pipeline, load_pipeline, resolve_pipeline  # noqa: E402


def sentences(conllu: Path) -> list[str]:
    return [line[len("# text = "):].strip() for line in conllu.read_text(encoding="utf-8").splitlines()
            if line.startswith("# text = ")]


def accuracy(nlp, corpus: Path, gold_preproc: bool) -> dict[str, float]:
    from spacy.training import Corpus

    return scores_of(nlp, list(Corpus(str(corpus), gold_preproc=gold_preproc)(nlp)))


def paragraphs(nlp, conllu: Path) -> list:
    """One spaCy ``Example`` per paragraph of ``conllu``: the pipeline's tokens of the paragraph's raw text
    (its sentences joined by single spaces) against the gold sentences."""
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy.training.converters import conllu_to_docs

    groups: list[list[str]] = []
    for block in conllu.read_text(encoding="utf-8").strip().split("\n\n"):
        new = any(line.startswith(("# newpar", "# newdoc")) for line in block.splitlines())
        if new or not groups:
            groups.append([])
        groups[-1].append(block)
    examples = []
    for group in groups:
        docs = list(conllu_to_docs("\n\n".join(group) + "\n\n", n_sents=1, no_print=True))
        ref = Doc.from_docs(docs, ensure_whitespace=True) if len(docs) > 1 else docs[0]
        ref = Doc(nlp.vocab).from_bytes(ref.to_bytes())
        examples.append(Example(nlp.make_doc(ref.text), ref))
    return examples


def scores_of(nlp, examples: list) -> dict[str, float]:
    scores = nlp.evaluate(examples)
    return {"UPOS": scores["pos_acc"] * 100, "XPOS": scores["tag_acc"] * 100,
            "morph": scores.get("morph_acc", 0.0) * 100, "lemma": (scores.get("lemma_acc") or 0.0) * 100,
            "UAS": scores["dep_uas"] * 100, "LAS": scores["dep_las"] * 100,
            "sentences F": (scores.get("sents_f") or 0.0) * 100}


def _timed_parse(name: str | None, texts: list[str], exclude: tuple[str, ...], barrier, out) -> None:
    nlp = load_pipeline(name, exclude=exclude)
    list(nlp.pipe(texts[:256], batch_size=256))  # warm up
    barrier.wait()
    t0 = time.perf_counter()
    n = sum(1 for _ in nlp.pipe(texts, batch_size=256))
    out.put((n, time.perf_counter() - t0))


def speed(name: str | None, texts: list[str], processes: int, exclude: tuple[str, ...], repeat: int) -> float:
    """Sentences/s of ``processes`` independent processes, each parsing its share of ``texts * repeat``
    with one thread (as cfaug's engines run a method on several cores): all sentences / the slowest
    process's time, loading excluded."""
    import multiprocessing as mp

    data = texts * repeat
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_timed_parse, args=(name, data[k::processes], exclude, barrier, out))
             for k in range(processes)]
    for p in procs:
        p.start()
    done = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(n for n, _ in done) / max(t for _, t in done)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ud", type=Path, default=REPO.parent / "shared" / "data" / "ud-english-ewt")
    ap.add_argument("--pipeline", default=None, help="spaCy pipeline folder or package (default: bundled en_ewt)")
    ap.add_argument("--repeat", type=int, default=10, help="passes over the test sentences when timing")
    ap.add_argument("--trials", type=int, default=3, help="timings per row; the median is reported")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "parser.results.md")
    args = ap.parse_args()

    test = args.ud / "en_ewt-ud-test.conllu"
    if not test.is_file():
        raise SystemExit(f"{test}: not found (pass --ud DIR)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "spacy", "convert", str(test), tmp, "--converter", "conllu",
                        "-n", "10", "--file-type", "spacy"], check=True, capture_output=True)
        corpus = Path(tmp) / "en_ewt-ud-test.spacy"
        nlp = load_pipeline(args.pipeline)
        paragraph_examples = paragraphs(nlp, test)
        para = scores_of(nlp, paragraph_examples)
        raw = accuracy(nlp, corpus, gold_preproc=False)
        gold = accuracy(nlp, corpus, gold_preproc=True)
    texts = sentences(test)
    lemmatizer = tuple(c for c in nlp.pipe_names if "lemmatizer" in c)
    not_tagger = tuple(c for c in nlp.pipe_names if c not in ("tok2vec", "tagger"))
    rows = []
    for label, exclude in (("full pipeline", ()), ("without the lemmatizer", lemmatizer),
                           ("tagger only", not_tagger)):
        for processes in (1, 2):
            rows.append((label, processes, statistics.median(
                speed(args.pipeline, texts, processes, exclude, args.repeat) for _ in range(args.trials))))

    facts = describe_pipeline(nlp)
    source = resolve_pipeline(args.pipeline)
    size_mb = (sum(p.stat().st_size for p in Path(source).rglob("*") if p.is_file()) / 2**20
               if Path(str(source)).exists() else None)
    cmd = "python bench/parser.py" + (f" --pipeline {args.pipeline}" if args.pipeline else "")
    lines = [
        "# English tagger and parser: accuracy on UD English-EWT test, and speed", "",
        f"Command: `{cmd}`", "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
        f"run on {date.today().isoformat()}.", "",
        f"Pipeline: {facts['name']} {facts['version']} (spaCy {facts['spacy_version']}), components "
        f"{', '.join(facts['components'])}" + (f"; {size_mb:.1f} MB on disk." if size_mb else "."), "",
        f"Test split: {len(texts)} sentences in {len(paragraph_examples)} paragraphs.", "",
        "Targets: UPOS >= 94, LAS >= 80 (raw text), >= 2,000 sentences/s with two processes.", "",
        "## Accuracy (%)", "",
        "| input | UPOS | XPOS | morph | lemma | UAS | LAS | sentence F |", "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, s in (("raw text, paragraph by paragraph (CoNLL 2018 protocol)", para),
                     ("raw text, 10 sentences run together", raw), ("gold tokens and sentences", gold)):
        lines.append(f"| {label} | {s['UPOS']:.1f} | {s['XPOS']:.1f} | {s['morph']:.1f} | {s['lemma']:.1f} | "
                     f"{s['UAS']:.1f} | {s['LAS']:.1f} | {s['sentences F']:.1f} |")
    lines += ["", "## Speed (sentences/s, one thread per process, batch 256; 2 = two independent processes)", "",
              f"Median of {args.trials} timings, each over the test sentences {args.repeat} times (timings on a shared "
              "machine vary by up to 20%).", "",
              "| components | processes | sentences/s |", "|---|---:|---:|"]
    lines += [f"| {label} | {n} | {v:.0f} |" for label, n, v in rows]
    result = {"bench": "parser", "pipeline": facts["name"], "upos_par": round(para["UPOS"], 2),
              "uas_par": round(para["UAS"], 2), "las_par": round(para["LAS"], 2), "upos_raw": round(raw["UPOS"], 2),
              "uas_raw": round(raw["UAS"], 2), "las_raw": round(raw["LAS"], 2),
              "upos_gold": round(gold["UPOS"], 2), "las_gold": round(gold["LAS"], 2),
              "sentences_per_s_full_2proc": round(rows[1][2]), "sentences_per_s_parse_2proc": round(rows[3][2])}
    lines += ["", "Machine-readable:", "", f"RESULT {json.dumps(result)}", ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
