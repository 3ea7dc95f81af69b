"""A comparison directory built by hand for the report tests: summary.json as ``cfaug compare`` writes it
(two methods that ran, one skipped, one failed, a reference with downstream figures only) and each ok
method's output rows in the output contract."""

from __future__ import annotations

import json
from pathlib import Path

from cfaug.compare.intervals import add_intervals, mark_ties

EVIL = 'A <script>document.title="pwned"</script> good film,<br /> with great acting.'

SOURCES = {
    "1": ("This was a wonderful film with a moving story.", "positive"),
    "2": ("The plot was dull and the acting was wooden.", "negative"),
    "3": (EVIL, "positive"),
    "4": ("I loved every minute of it, a true classic.", "positive"),
    "5": ("Boring, predictable and far too long.", "negative"),
    "6": ("An awful script saved by nothing at all.", "negative"),
    "7": ("A charming, funny and clever comedy.", "positive"),
}

#: per method: source id -> rewritten text (a source missing here has no counterfactual from that method)
REWRITES = {
    "auto-cad": {
        "1": "This was a dreadful film with a tedious story.",
        "2": "The plot was gripping and the acting was superb.",
        "3": EVIL.replace("good", "bad").replace("great", "awful"),
        "4": "I hated every minute of it, a true mess.",
        "5": "Gripping, surprising and never too long.",
        "6": "A brilliant script helped by everything.",
    },
    "coba": {
        "1": "This was a terrible film with a boring story.",
        "2": "The plot was exciting and the acting was lively.",
        "3": EVIL.replace("good", "poor"),
        "5": "Thrilling, fresh and just long enough.",
        "7": "A dreary, unfunny and clumsy comedy.",
    },
}

DOWNSTREAM = {
    "test": {"auto-cad": (0.842, 0.021, [0.008, 0.035]), "coba": (0.828, 0.007, [-0.006, 0.019]),
             "human": (0.855, 0.034, [0.019, 0.049])},
    "challenge": {"auto-cad": (0.701, 0.052, [0.027, 0.078]), "coba": (0.668, 0.019, [-0.004, 0.043]),
                  "human": (0.742, 0.093, [0.066, 0.121])},
}


#: the downstream record's choices of classifier settings, and one model that predicted one label
SELECTION = {
    "originals": [{"seed": 0, "name": "originals", "settings": {"C": 1.0, "ngram_max": 2}, "how": "default",
                   "score": None, "rows": 7, "note": "7 training rows, under 50: too few to choose settings on"}],
    "originals + auto-cad": [{"seed": 0, "name": "auto-cad", "settings": {"C": 10.0, "ngram_max": 1},
                              "how": "5-fold cross-validation", "score": 0.8125, "rows": 64, "note": "..."}],
}
WARNINGS = [{"condition": "originals + coba", "name": "coba", "seed": 0, "test_set": "test", "label": "negative",
             "share": 0.98, "gold_share": 0.5, "predicted": 49, "items": 50}]


def _downstream(name: str, with_downstream: bool):
    if not with_downstream:
        return None
    return {ts: dict(zip(("accuracy", "gain", "ci95"), by[name])) for ts, by in DOWNSTREAM.items()}


#: per method: sources whose counterfactual the judge reads as the target label
FLIPPED = {"auto-cad": 5, "coba": 3}


def _ok(name: str, flip: float, edit: float, seconds: float, llm, with_downstream: bool) -> dict:
    n = len(REWRITES[name])
    return {"method": name, "status": "ok", "reason": None, "rows": len(SOURCES), "counterfactuals": n,
            "coverage": n / len(SOURCES), "flipped_coverage": FLIPPED[name] / len(SOURCES),
            "flip_rate": flip, "edit_rate": edit, "minimality": 1 - edit,
            "similarity": 0.91, "fluency": {"name": "gpt2-perplexity", "value": 61.2, "originals": 48.9},
            "diversity": 0.42, "seconds": seconds, "llm": llm, "downstream": _downstream(name, with_downstream),
            "run_dir": f"runs/{name}", "output": f"runs/{name}/counterfactuals.jsonl"}


def _not_run(name: str, status: str, reason: str) -> dict:
    return {"method": name, "status": status, "reason": reason, "rows": len(SOURCES), "counterfactuals": 0,
            "coverage": None, "flip_rate": None, "edit_rate": None, "minimality": None, "similarity": None,
            "fluency": None, "diversity": None, "seconds": None, "llm": None, "downstream": None,
            "run_dir": f"runs/{name}", "output": f"runs/{name}/counterfactuals.jsonl"}


def write_output(path: Path, method: str) -> None:
    """``method``'s rows in the output contract (text, label, source_id, original_*, method, meta)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for sid, new in REWRITES[method].items():
        text, label = SOURCES[sid]
        target = "negative" if label == "positive" else "positive"
        lines.append(json.dumps({"text": new, "label": target, "source_id": sid, "original_text": text,
                                 "original_label": label, "method": f"{method}.v1",
                                 "meta": {"edits": [{"from": "x", "to": "y"}] * 2, "variant": "v"}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_compare_dir(root: Path, with_downstream: bool = True) -> Path:
    """A comparison directory under ``root`` (see module docstring); returns it."""
    root.mkdir(parents=True, exist_ok=True)
    methods = [
        _ok("auto-cad", 0.83, 0.12, 41.5, None, with_downstream),
        _ok("coba", 0.64, 0.21, 96.0,
            {"requests": 1200, "input_tokens": 345678, "output_tokens": 45678, "cost_usd": 0.4321},
            with_downstream),
        _not_run("zero-shot", "skipped", "needs an LLM endpoint: give --llm-base-url and --llm-model"),
        _not_run("lass", "failed", "the masked language model at models/bert could not be loaded"),
    ]
    methods[0].update({"items_without_counterfactual": 1, "without_reasons": {"no causal term found": 1}})
    methods[1].update({"items_without_counterfactual": 2,
                       "without_reasons": {"every candidate failed a filter: flip": 1, "no principal triple": 1}})
    for m in methods:
        add_intervals(m)
    # the rows each method covered and flipped: its first FLIPPED rewrites are the flipped ones
    outcomes = {name: {"coverage": set(REWRITES[name]), "flipped_coverage": set(list(REWRITES[name])[:FLIPPED[name]])}
                for name in REWRITES}
    note = mark_ties(methods, outcomes)
    if with_downstream:
        methods.append({**_not_run("human", "reference", None), "downstream": _downstream("human", True),
                        "run_dir": None, "output": None})
    summary = {"methods": methods, "ranking_rule": "flip rate times coverage, ties by lower edit rate",
               "ranking_note": note,
               "judge": {"kind": "tfidf-logreg", "trained_on": "judge_train.tsv", "cross_fitted": False},
               "data": {"path": "imdb_test.tsv", "sha256": "ab" * 32, "rows": len(SOURCES)},
               "downstream": ({"classifier": "tfidf-logreg", "seeds": 3, "originals": {"test": 0.821},
                               "paired": [{"a": "auto-cad", "b": "coba", "test": "test", "p": 0.04}],
                               "selection": SELECTION, "warnings": WARNINGS}
                              if with_downstream else None)}
    (root / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    (root / "compare.json").write_text(json.dumps({"data": "imdb_test.tsv", "seed": 13, "limit": 7,
                                                   "methods": [m["method"] for m in methods[:4]]}),
                                       encoding="utf-8")
    for name in REWRITES:
        write_output(root / "runs" / name / "counterfactuals.jsonl", name)
    return root
