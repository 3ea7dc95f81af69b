"""Build cfaug's tables of how often each English word is used as an adjective, adverb, noun or verb, and
of what comes right after each verb and adjective (a particle, "of", an object, the end of a clause).

    python tools/nlp/word_classes.py                       # default data: ../shared/data (about 4 min, one core)
    python tools/nlp/word_classes.py --data DIR --out FILE --followers-out FILE

A dictionary lists every class a word *can* have ("quiet" can be a noun, "safe" a verb), which lets a
replacement take a class readers never see it in ("an outsider" -> "a quiet", "warned" -> "safed"). This
table counts the classes the bundled tagger (``en_ewt``) gives each word in review text, so
:func:`cfaug.nlp.inflect.usual_share` can tell the usual classes from the rare ones.

Corpora (train splits only): Yelp review sentences (``yelp-sentences``, 167k), SST-2 train phrases
(``sst2/train.tsv``, 61k) and the CAD-IMDB originals of the train split (``cad-imdb/orig/train.tsv``,
1,707 reviews; no human counterfactual). Only lower-case alphabetic words (hyphens allowed) seen at least
``--min-count`` times are kept. The output is a TSV ``word ADJ ADV NOUN VERB OTHER`` of counts.

The same pass writes ``followers.tsv`` (:mod:`cfaug.nlp.followers`): for each verb and adjective lemma seen at
least ``--min-lemma`` times, a row ``lemma upos * N`` with its number of uses and a row ``lemma upos s n`` for
each slot ``s`` (a particle, ``<object>``, ``<end>``; see ``cfaug.nlp.followers.slot``) seen right after it at
least ``MIN_PAIR`` times.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from cfaug.nlp import load_pipeline  # noqa: E402
from cfaug.nlp.followers import END, FOLLOWERS, MIN_PAIR, TOTAL, lemma_of, slot  # noqa: E402
from cfaug.nlp.inflect import WORD_CLASS_COLUMNS, upos_of_tag  # noqa: E402

OUT = REPO / "src" / "cfaug" / "resources" / "nlp" / "word_classes.tsv"
FOLLOWERS_OUT = OUT.with_name("followers.tsv")


def texts(data: Path) -> list[str]:
    out: list[str] = []
    with open(data / "yelp-sentences" / "yelp_sentences.tsv", encoding="utf-8", newline="") as fh:
        out += [row["text"] for row in csv.DictReader(fh, delimiter="\t")]
    with open(data / "sst2" / "train.tsv", encoding="utf-8", newline="") as fh:
        out += [row["sentence"] for row in csv.DictReader(fh, delimiter="\t")]
    with open(data / "cad-imdb" / "orig" / "train.tsv", encoding="utf-8", newline="") as fh:
        out += [row["Text"].replace("<br />", " ") for row in csv.DictReader(fh, delimiter="\t")]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--min-count", type=int, default=3)
    ap.add_argument("--followers-out", type=Path, default=FOLLOWERS_OUT)
    ap.add_argument("--min-lemma", type=int, default=10, help="uses a lemma needs for a followers row")
    args = ap.parse_args()

    t0 = time.perf_counter()
    corpus = texts(args.data)
    nlp = load_pipeline(None, only=("tok2vec", "tagger"))
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    follows: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for k, doc in enumerate(nlp.pipe(corpus, batch_size=256)):
        for tok in doc:
            w = tok.text.lower()
            if w.replace("-", "").isalpha():
                upos = upos_of_tag(tok.tag_)
                counts[w][upos or "OTHER"] += 1
                if upos in FOLLOWERS:
                    key = (lemma_of(w, upos), upos)
                    follows[key][TOTAL] += 1
                    nxt = slot(doc[tok.i + 1].text, upos) if tok.i + 1 < len(doc) else END
                    if nxt is not None:
                        follows[key][nxt] += 1
        if k % 20000 == 0:
            print(f"{k}/{len(corpus)} texts, {time.perf_counter() - t0:.0f} s", flush=True)
    rows = sorted((w, c) for w, c in counts.items() if sum(c.values()) >= args.min_count)
    with open(args.out, "w", encoding="utf-8", newline="") as fh:
        fh.write("word\t" + "\t".join(WORD_CLASS_COLUMNS) + "\n")
        for w, c in rows:
            fh.write(w + "\t" + "\t".join(str(c[col]) for col in WORD_CLASS_COLUMNS) + "\n")
    print(f"{len(rows)} words from {len(corpus)} texts -> {args.out} ({time.perf_counter() - t0:.0f} s)")
    kept = sorted((key, c) for key, c in follows.items() if c[TOTAL] >= args.min_lemma)
    with open(args.followers_out, "w", encoding="utf-8", newline="") as fh:
        fh.write("lemma\tupos\tfollower\tcount\n")
        for (lemma, upos), c in kept:
            for follower, n in sorted(c.items()):
                if follower == TOTAL or n >= MIN_PAIR:
                    fh.write(f"{lemma}\t{upos}\t{follower}\t{n}\n")
    print(f"{len(kept)} verb and adjective lemmas -> {args.followers_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
