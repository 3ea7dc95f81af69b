"""Build cfaug's bundled English tagger, morphologizer, lemmatizer and dependency parser from UD English-EWT.

    python tools/nlp/build.py --ud ../shared/data/ud-english-ewt            # ~60 min on one core
    python tools/nlp/build.py --ud DIR --max-steps 600 --out /tmp/quick     # a quick, weaker model

Steps: the treebank's train and dev CoNLL-U files are converted to spaCy's binary format (10 sentences per
document, so the parser also learns where sentences end), a pipeline (tagger, morphologizer, parser) is
trained from `en_ewt.cfg` beside this script (no pretrained vectors, CPU, seed 0, bounded by steps because
spaCy has no time limit), a table lemmatizer (``cfaug.nlp.lemmatizer``) is fitted on the train split and
added to the best checkpoint on the dev split, and the result is written to ``src/cfaug/resources/nlp/en_ewt``
with the treebank's license note. `bench/parser.py` then measures accuracy on the test split and speed.

The treebank (Universal Dependencies English Web Treebank) is licensed CC BY-SA 4.0; the trained model is a
derivative of it and carries the same license (see LICENSE.md in the model folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import spacy

import cfaug.nlp.lemmatizer  # noqa: F401  (registers the cfaug_lemmatizer factory)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = REPO / "src" / "cfaug" / "resources" / "nlp" / "en_ewt"

LICENSE_NOTE = """# en_ewt: cfaug's English pipeline

Trained by `tools/nlp/build.py` from the Universal Dependencies English Web Treebank (UD_English-EWT),
train split, with the best checkpoint chosen on its dev split. Components: tok2vec, tagger (Penn Treebank
tags), morphologizer (universal part of speech and features), dependency parser, and a table lemmatizer
learned from the same train split (cfaug's `cfaug_lemmatizer` factory, so cfaug must be installed to load
this folder). No pretrained vectors.

License: the treebank is distributed under the Creative Commons Attribution-ShareAlike 4.0 International
license (CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/). This model is derived from it and is
distributed under the same license. Treebank authors: Silveira et al. (2014), "A Gold Standard Dependency
Corpus for English"; Universal Dependencies contributors.
"""


def sh(cmd: list[str], env: dict[str, str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ud", type=Path, default=REPO.parent / "shared" / "data" / "ud-english-ewt",
                    help="folder with en_ewt-ud-{train,dev}.conllu")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "_work" / "nlp", help="scratch folder")
    ap.add_argument("--out", type=Path, default=TARGET, help="where the finished model folder goes")
    ap.add_argument("--config", type=Path, default=HERE / "en_ewt.cfg")
    ap.add_argument("--max-steps", type=int, default=None, help="override the config's training.max_steps")
    args = ap.parse_args()

    for split in ("train", "dev"):
        if not (args.ud / f"en_ewt-ud-{split}.conllu").is_file():
            raise SystemExit(f"{args.ud}: en_ewt-ud-{split}.conllu not found (pass --ud DIR)")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    corpus = args.work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev"):
        sh([sys.executable, "-m", "spacy", "convert", str(args.ud / f"en_ewt-ud-{split}.conllu"), str(corpus),
            "--converter", "conllu", "-n", "10", "--file-type", "spacy"], env)
    trained = args.work / "trained"
    if trained.exists():
        shutil.rmtree(trained)
    cmd = [sys.executable, "-m", "spacy", "train", str(args.config), "--output", str(trained), "--gpu-id", "-1",
           "--paths.train", str(corpus / "en_ewt-ud-train.spacy"), "--paths.dev", str(corpus / "en_ewt-ud-dev.spacy")]
    if args.max_steps is not None:
        cmd += ["--training.max_steps", str(args.max_steps)]
    t0 = time.perf_counter()
    sh(cmd, env)
    minutes = (time.perf_counter() - t0) / 60

    best = trained / "model-best"
    nlp = spacy.load(best)
    lemmatizer = nlp.add_pipe("cfaug_lemmatizer", name="lemmatizer")
    table = lemmatizer.fit_conllu([args.ud / "en_ewt-ud-train.conllu"])
    print(f"lemmatizer table: {table}", flush=True)
    nlp.to_disk(best)
    meta_path = best / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.update(name="en_ewt", version="1.1.0", license="CC BY-SA 4.0",
                description="English tagger, morphologizer, parser and table lemmatizer trained on UD English-EWT "
                            "by cfaug's tools/nlp/build.py (no pretrained vectors).",
                sources=[{"name": "UD English-EWT", "url": "https://universaldependencies.org/treebanks/en_ewt/",
                          "license": "CC BY-SA 4.0"}])
    steps = args.max_steps or int(re.search(r"^max_steps = (\d+)", args.config.read_text(), re.M).group(1))
    meta.setdefault("cfaug", {}).update(training_minutes=round(minutes, 1), max_steps=steps, config=args.config.name,
                                       lemmatizer=table)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    (best / "LICENSE.md").write_text(LICENSE_NOTE)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(best, args.out)
    print(f"model written to {args.out} (training took {minutes:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
