"""The sample pool of target-to-source augmentation: labelled and pseudo-labelled sentences with their
syntactic templates.

* :func:`read_unlabeled` reads in-domain sentences (a ``.txt`` file with one per line, or any table cfaug
  reads with a ``text`` column) and tokenizes them as ASTE data is (spaCy's tokenizer).
* :func:`pseudo_label` runs an ASTE model over them and keeps a sentence when it has at least one triplet
  and every triplet's confidence reaches ``min_confidence`` (the paper keeps predictions whose every step
  has probability >= 0.75). Invalid labels cannot arise: the model predicts spans inside the sentence.
* :func:`add_templates` parses each sentence (the bundled tagger/parser) and writes its template
  (:mod:`cfaug.nlp.templates`).

A pool entry is a dict: ``id``, ``tokens``, ``triplets`` (canonical label), ``label_seq``, ``template``,
``source`` (``train`` or ``pseudo``), ``confidence``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.aste import AsteExample, format_triplets, label_sequence, parse_triplets


class PoolError(ValueError):
    """The unlabelled data cannot be used (missing file, no text column, nothing left)."""


def read_unlabeled(path: str | Path, limit: int, seed: int, max_words: int) -> tuple[list[list[str]], dict[str, Any]]:
    """Up to ``limit`` distinct sentences of at most ``max_words`` tokens from ``path`` (a seeded sample when
    there are more), tokenized. Returns the token lists and counts of what was read and skipped."""
    from cfaug.data.io import open_rows

    p = Path(path)
    if not p.exists():
        raise PoolError(f"{p}: no such file (unlabeled=)")
    texts: list[str] = []
    bad = 0
    if p.suffix.lower() == ".txt":
        with open(p, encoding="utf-8", errors="replace") as fh:
            texts = [line.strip() for line in fh if line.strip()]
    else:
        name, cols, rows = open_rows(p, None)
        col = next((c for c in ("text", "sentence", "review", "content") if c in cols), None)
        if col is None:
            raise PoolError(f"{name}: no text column among {', '.join(cols) or 'none'} (unlabeled=)")
        for _, row in rows:
            if isinstance(row, str) or not str(row.get(col) or "").strip():
                bad += 1
                continue
            texts.append(str(row[col]).strip())
    unique = list(dict.fromkeys(texts))
    rng = random.Random(seed)
    rng.shuffle(unique)
    from cfaug.nlp.pipeline import load_pipeline

    tokenizer = load_pipeline(exclude=("lemmatizer",)).tokenizer
    out: list[list[str]] = []
    too_long = 0
    for text in unique:
        if len(out) >= limit:
            break
        tokens = [t.text for t in tokenizer(text) if t.text.strip()]
        if not tokens or len(tokens) > max_words:
            too_long += 1
            continue
        out.append(tokens)
    if not out:
        raise PoolError(f"{p}: no usable sentence (all empty or longer than {max_words} tokens)")
    return out, {"lines": len(texts), "unreadable_rows": bad, "distinct": len(unique),
                 "skipped_too_long": too_long, "sampled": len(out)}


def pseudo_label(extractor: Any, sentences: Sequence[Sequence[str]], min_confidence: float,
                 progress: Callable[[int], None] | None = None, batch_size: int = 256) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Pool entries for the sentences the extractor labels confidently (see the module docstring)."""
    kept: list[dict[str, Any]] = []
    no_triplet = low = 0
    for b in range(0, len(sentences), batch_size):
        chunk = sentences[b: b + batch_size]
        for k, (tokens, preds) in enumerate(zip(chunk, extractor.predict(chunk))):
            if progress is not None:
                progress(1)
            if not preds:
                no_triplet += 1
                continue
            conf = min(p.confidence for p in preds)
            if conf < min_confidence:
                low += 1
                continue
            triplets = tuple(sorted({p.triplet for p in preds}))
            kept.append(entry(f"u{b + k}", tokens, triplets, "pseudo", conf))
    return kept, {"sentences": len(sentences), "kept": len(kept), "no_triplet": no_triplet,
                  "low_confidence": low, "min_confidence": min_confidence}


def entry(id: str, tokens: Sequence[str], triplets: Iterable[Any], source: str,
          confidence: float | None = None) -> dict[str, Any]:
    trip = tuple(triplets)
    return {"id": id, "tokens": list(tokens), "triplets": format_triplets(trip),
            "label_seq": label_sequence(tokens, trip), "template": None, "source": source,
            "confidence": None if confidence is None else round(float(confidence), 4)}


def from_examples(examples: Sequence[AsteExample], source: str = "train") -> list[dict[str, Any]]:
    return [entry(f"{source[0]}{ex.id}", ex.tokens, ex.triplets, source) for ex in examples if ex.triplets]


def add_templates(pool: list[dict[str, Any]], *, max_depth: int = 0, prune_terms: bool = False,
                  pipeline: str | None = None, progress: Callable[[int], None] | None = None) -> None:
    """Parse every entry and set its ``template`` in place."""
    from cfaug.nlp.pipeline import load_pipeline
    from cfaug.nlp.templates import dependency_template, parse_tokens

    nlp = load_pipeline(pipeline, exclude=("lemmatizer",))
    docs = parse_tokens((e["tokens"] for e in pool), nlp)
    for e, doc in zip(pool, docs):
        exclude: set[int] = set()
        if prune_terms:
            for t in parse_triplets(e["triplets"]):
                exclude.update(t.aspect)
                exclude.update(t.opinion)
        e["template"] = dependency_template(doc, exclude, max_depth)
        if progress is not None:
            progress(1)


def write_pool(pool: Sequence[dict[str, Any]], path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for e in pool:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_pool(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def n_triplets(e: dict[str, Any]) -> int:
    return len(parse_triplets(e["triplets"]))
