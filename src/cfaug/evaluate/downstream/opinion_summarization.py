"""The opinion-summarization test of LASS: does a summarizer write negative summaries for negative groups?

Groups of reviews with gold summaries are read from the layouts of the public sets
(:func:`read_groups`): MeanSum's Yelp file (``Input.original_review_0..7``, ``Answer.summary``) and the
Copycat/FewSum files (``rev1..8``, ``summ1..3``, CSV or TSV). :func:`score_summaries` then reports:

* **sentiment precision** per group polarity, at summary level (the whole summary classified) and at
  sentence level (each summary sentence classified, averaged per summary): a summary of a negative group
  scores 1 when the classifier calls it negative, 0.5 when it is undecided (positive probability within
  ``band`` of 0.5, the neutral class of a three-way classifier) and 0 when it calls it positive, and the
  other way round for positive groups; on a 0-100 scale;
* **ROUGE-1/2/L** F1 against the gold summaries (:mod:`cfaug.evaluate.rouge`), averaged over a group's
  references, then over groups; on a 0-100 scale.

A group's polarity is that of its gold summaries: negative when the classifier's mean positive
probability over them is below 0.5.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.io import DataError
from cfaug.evaluate.rouge import rouge


@dataclass
class Group:
    """A group of reviews (one business or product) and its gold summaries."""

    id: str
    reviews: list[str]
    references: list[str]
    meta: dict[str, Any] = field(default_factory=dict)


def read_groups(path: str | Path) -> list[Group]:
    """The groups of a MeanSum, Copycat or FewSum file (see the module docstring). Rows without reviews or
    without a gold summary are skipped; a file with neither layout raises :class:`DataError`."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        head = fh.readline()
        fh.seek(0)
        rows = list(csv.DictReader(fh, delimiter="\t" if head.count("\t") > head.count(",") else ","))
    if not rows:
        raise DataError(f"{path}: no rows")
    columns = list(rows[0])
    if "Answer.summary" in columns:
        review_cols = sorted((c for c in columns if c.startswith("Input.original_review_") and not c.endswith("_id")),
                             key=lambda c: int(c.rsplit("_", 1)[1]))
        summary_cols, id_col = ["Answer.summary"], "Input.business_id"
    elif any(c.startswith("rev") for c in columns) and any(c.startswith("summ") for c in columns):
        review_cols = [c for c in columns if c.startswith("rev") and c[3:].isdigit()]
        summary_cols, id_col = [c for c in columns if c.startswith("summ") and c[4:].isdigit()], "group_id"
    else:
        raise DataError(f"{path}: not a MeanSum (Input.original_review_N, Answer.summary) or Copycat/FewSum "
                        f"(revN, summN) file; columns: {', '.join(columns)}")
    out = []
    for n, row in enumerate(rows):
        reviews = [row[c].strip() for c in review_cols if (row.get(c) or "").strip()]
        refs = [row[c].strip() for c in summary_cols if (row.get(c) or "").strip()]
        if reviews and refs:
            out.append(Group(str(row.get(id_col) or f"{path.name}:{n + 2}"), reviews, refs, {"source": path.name}))
    return out


def polarity_credit(p_positive: float, negative_group: bool, band: float = 0.1) -> float:
    """1 when the classifier agrees with the group's polarity, 0.5 when it is undecided, else 0."""
    if abs(p_positive - 0.5) <= band:
        return 0.5
    return float((p_positive < 0.5) == negative_group)


def score_summaries(groups: Sequence[Group], summaries: Sequence[Sequence[str]],
                    positive_prob: Callable[[list[str]], list[float]], band: float = 0.1) -> dict[str, Any]:
    """Sentiment precision and ROUGE of ``summaries`` (each a list of sentences) of ``groups`` (see the
    module docstring). ``positive_prob`` is the independent classifier: P(positive) of each text."""
    if len(groups) != len(summaries):
        raise ValueError(f"got {len(groups)} groups but {len(summaries)} summaries")
    ref_probs = positive_prob([r for g in groups for r in g.references])
    negative, k = [], 0
    for g in groups:
        ps = ref_probs[k: k + len(g.references)]
        k += len(g.references)
        negative.append(sum(ps) / len(ps) < 0.5)
    texts = [" ".join(s) for s in summaries]
    summary_probs = positive_prob(texts)
    sentences = [list(s) if s else [""] for s in summaries]
    flat = positive_prob([x for s in sentences for x in s])
    per: dict[str, dict[str, list[float]]] = {"negative": {"summary": [], "sentence": []},
                                              "positive": {"summary": [], "sentence": []}}
    k = 0
    for neg, p, s in zip(negative, summary_probs, sentences):
        side = per["negative" if neg else "positive"]
        side["summary"].append(polarity_credit(p, neg, band))
        side["sentence"].append(sum(polarity_credit(q, neg, band) for q in flat[k: k + len(s)]) / len(s))
        k += len(s)
    out: dict[str, Any] = {"groups": len(groups), "negative_groups": sum(negative), "band": band}
    for side, levels in per.items():
        for level, values in levels.items():
            out[f"{side}_precision_{level}"] = round(100 * sum(values) / len(values), 2) if values else None
    r: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": []}
    for g, text in zip(groups, texts):
        d = rouge([text] * len(g.references), g.references).details
        for key in r:
            r[key].append(d[key])
    for key, values in r.items():
        out[key] = round(100 * sum(values) / len(values), 2)
    out["mean_summary_words"] = round(sum(len(t.split()) for t in texts) / max(1, len(texts)), 1)
    return out


#: the scores of :func:`score_summaries` that :func:`run_summarization_test` averages over seeds
SCORES = ("negative_precision_summary", "negative_precision_sentence", "positive_precision_summary",
          "positive_precision_sentence", "rouge1", "rouge2", "rougeL")


def run_summarization_test(conditions: Sequence[tuple[str, Sequence[str]]], groups: Sequence[Group],
                           positive_prob: Callable[[list[str]], list[float]], artifact_dir: str | Path, *,
                           seeds: Sequence[int] = (0,), settings: Any = None, select: str = "overlap",
                           subset_size: int = 1, sentences: int = 3, beam: int = 4, progress: bool = False,
                           log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train a summarizer (:mod:`cfaug.evaluate.downstream.summarizer`) on the texts of each condition
    (``(name, texts)``: e.g. the skewed corpus, then corpus + counterfactuals) with each seed, summarize
    ``groups`` (``select``/``subset_size`` as :func:`~cfaug.evaluate.downstream.summarizer.summarize`) and
    score the summaries (:func:`score_summaries`). Models are kept under ``artifact_dir/<condition number>/
    seed<seed>``, where a killed training resumes. Returns per condition its text count, the scores of
    every seed and their mean and sample standard deviation."""
    from cfaug.evaluate.downstream.aste import summarize as mean_and_std
    from cfaug.evaluate.downstream.summarizer import load_summarizer, summarize, train_summarizer
    from cfaug.training.context import FitContext

    if not conditions or not groups or not seeds:
        raise ValueError("the summarization test needs at least one condition, one group and one seed")
    out: dict[str, Any] = {"groups": len(groups), "seeds": list(seeds), "select": select,
                           "subset_size": subset_size, "conditions": {}}
    for number, (name, texts) in enumerate(conditions):
        runs = []
        for seed in seeds:
            folder = Path(artifact_dir) / str(number) / f"seed{seed}"
            if log:
                log(f"{name}: training the summarizer on {len(texts):,} texts (seed {seed}) in {folder}")
            train_summarizer(list(texts), FitContext(artifact_dir=folder, progress=progress, seed=seed), settings)
            model, vocab = load_summarizer(folder)
            made = [summarize(model, vocab, g.reviews, sentences=sentences, beam=beam, select=select,
                              subset_size=subset_size) for g in groups]
            runs.append({**score_summaries(groups, made, positive_prob),
                         "examples": [" ".join(x) for x in made[:3]]})
        mean, sd = {}, {}
        for key in SCORES:
            scored = [r for r in runs if r[key] is not None]  # None: no group of that polarity
            if scored:
                m, d = mean_and_std(scored, key)
                mean[key], sd[key] = round(m, 2), round(d, 2)
        out["negative_groups"] = runs[0]["negative_groups"]
        out["conditions"][name] = {"texts": len(texts), "runs": runs, "mean": mean, "sd": sd}
    return out


def summarization_table(result: dict[str, Any]) -> str:
    """A Markdown table of :func:`run_summarization_test`'s result (mean ± sd over the seeds)."""
    def cell(row: dict[str, Any], key: str) -> str:
        if key not in row["mean"]:
            return "-"
        return f"{row['mean'][key]:.1f} ± {row['sd'][key]:.1f}" if len(result["seeds"]) > 1 else \
            f"{row['mean'][key]:.1f}"

    lines = ["| training data | texts | negative precision (summary / sentence) | positive precision (summary / "
             "sentence) | ROUGE-1 | ROUGE-2 | ROUGE-L |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in result["conditions"].items():
        lines.append(f"| {name} | {row['texts']:,} | {cell(row, 'negative_precision_summary')} / "
                     f"{cell(row, 'negative_precision_sentence')} | {cell(row, 'positive_precision_summary')} / "
                     f"{cell(row, 'positive_precision_sentence')} | {cell(row, 'rouge1')} | {cell(row, 'rouge2')} | "
                     f"{cell(row, 'rougeL')} |")
    lines += ["", f"{result['groups']} groups ({result['negative_groups']} negative by their gold summaries), "
              f"seeds {', '.join(map(str, result['seeds']))}, summary sentences chosen by `{result['select']}`."]
    return "\n".join(lines)


__all__ = ["Group", "SCORES", "polarity_credit", "read_groups", "run_summarization_test", "score_summaries",
           "summarization_table"]
