"""Build cfaug's shipped general sentiment sample, ``src/cfaug/resources/sentiment/general.tsv``.

    python tools/sentiment/general_sample.py                     # default data: ../shared/data (a few seconds)
    python tools/sentiment/general_sample.py --data DIR --per-source 10000

The sample is the labelled background that auto-CAD adds to the training data of its classifier C
(``-p classifier_background=general``, the default): a classifier trained on a few hundred reviews knows
few opinion words, and one that has also read general review text weighs them more steadily.

It holds ``--per-source`` rows from each of two training sets, drawn at random with seed 0, each source
half negative and half positive:

- Yelp review sentences (``yelp-sentences/yelp_sentences.tsv``: Shen et al. 2017's sentiment-transfer data,
  Apache-2.0 repository; no sentence of the Li et al. 2018 dev/test sets is in that file);
- SST-2 training phrases of at least 4 words (``sst2/train.tsv``, the GLUE training data re-split; the
  dev part is not used).

No CAD-IMDB text (original or counterfactual) and no test split of any dataset is read.
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "src" / "cfaug" / "resources" / "sentiment" / "general.tsv"
MIN_WORDS = 4  #: SST-2 phrases shorter than this carry little context ("not", "a good")


def read_rows(path: Path, label_col: str, text_col: str) -> list[tuple[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [(row[label_col], " ".join(row[text_col].split()))
                for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]


def balanced(rows: list[tuple[str, str]], n: int, rng: random.Random, source: str) -> list[tuple[str, str, str]]:
    """``n`` rows of ``rows`` (label "0"/"1"), half of each label, as (label name, text, source)."""
    out = []
    for lab, name in (("0", "negative"), ("1", "positive")):
        texts = sorted({t for l, t in rows if l == lab and t})
        if len(texts) < n // 2:
            raise SystemExit(f"{source}: only {len(texts)} {name} rows, {n // 2} needed")
        out += [(name, t, source) for t in rng.sample(texts, n // 2)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--per-source", type=int, default=10000)
    ap.add_argument("--out", type=Path, default=TARGET)
    args = ap.parse_args()
    rng = random.Random(0)
    yelp = read_rows(args.data / "yelp-sentences" / "yelp_sentences.tsv", "label", "text")
    sst = [(l, t) for l, t in read_rows(args.data / "sst2" / "train.tsv", "label", "sentence")
           if len(t.split()) >= MIN_WORDS]
    rows = balanced(yelp, args.per_source, rng, "yelp") + balanced(sst, args.per_source, rng, "sst2")
    rng.shuffle(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="") as fh:
        fh.write("label\ttext\tsource\n")
        for lab, text, source in rows:
            fh.write(f"{lab}\t{text}\t{source}\n")
    print(f"{len(rows)} rows written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
