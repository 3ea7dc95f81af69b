"""``--limit N`` takes one sample in ``cfaug augment`` and ``cfaug compare``: seeded, balanced by label, the
same rows for the same seed and file, a larger N a superset of a smaller one; the summary says which rows
were taken and the run directory keeps their ids (cfaug.data.sampling)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.data.records import Counterfactual
from cfaug.methods.base import METHODS, Method
from cfaug.registry import Entry


@dataclass
class FlipConfig:
    pass


class WordFlip(Method):
    """Swaps "good" and "bad": fast enough to run on every row of a test."""

    name = "word-flip.v1"
    Config = FlipConfig
    supported_tasks = ("sentiment",)

    def generate(self, items, task):
        swap = {"good": "bad", "bad": "good"}
        return [[Counterfactual(it.record, {"text": " ".join(swap.get(w, w) for w in it.record.text().split())},
                                it.target, self.name, {"passed": True})] for it in items]


@pytest.fixture(autouse=True)
def registered(monkeypatch, tmp_path):
    monkeypatch.setitem(METHODS._entries, WordFlip.name, Entry(WordFlip.name, "test method", WordFlip))
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def sorted_file(tmp_path) -> Path:
    """60 reviews sorted by label: 30 negative, then 30 positive."""
    f = tmp_path / "sorted.tsv"
    rows = [f"n{i:02d}\tnegative\ta bad film number {i} with a bad plot" for i in range(30)]
    rows += [f"p{i:02d}\tpositive\ta good film number {i} with a good plot" for i in range(30)]
    f.write_text("id\tlabel\ttext\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return f


def test_the_sample_is_seeded_balanced_and_grows_as_a_superset():
    from cfaug.data.sampling import sample_order, sample_positions

    keys = [f"r{i}" for i in range(60)]
    labels = ["negative"] * 45 + ["positive"] * 15  # sorted by label, and unbalanced
    take = sample_positions(keys, labels, 20, seed=0)
    assert len(take) == 20 and take == sorted(take)
    assert sum(labels[i] == "negative" for i in take) == 10  # balanced, not the first 20 (all negative)
    assert take == sample_positions(keys, labels, 20, seed=0) != sample_positions(keys, labels, 20, seed=1)
    for small, large in [(1, 2), (5, 20), (20, 21), (20, 40), (40, 59)]:
        assert set(sample_positions(keys, labels, small, 0)) < set(sample_positions(keys, labels, large, 0))
    # a label whose rows are used up drops out: 40 rows take all 15 positive ones
    assert sum(labels[i] == "positive" for i in sample_positions(keys, labels, 40, 0)) == 15
    assert sample_positions(keys, labels, None, 0) == list(range(60)) == sample_positions(keys, labels, 99, 0)
    # the order depends on the ids, not on where the rows stand in the file
    order = sample_order(keys, labels, 0)
    moved = sample_order(keys[::-1], labels[::-1], 0)
    assert [keys[i] for i in order] == [keys[::-1][i] for i in moved]
    assert sorted(sample_order(keys, None, 3)) == list(range(60))  # open labels: one seeded order


def ids_of(path: Path, column: str) -> list[str]:
    return [json.loads(line)[column] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_augment_and_compare_take_the_same_rows_from_a_sorted_file(sorted_file, tmp_path, capsys):
    out = tmp_path / "cf.jsonl"
    assert main(["augment", str(sorted_file), "-o", str(out), "--method", "word-flip", "--limit", "20",
                 "--seed", "3", "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    taken = ids_of(out, "source_id")
    assert len(taken) == 20 and sum(i.startswith("n") for i in taken) == 10
    # the summary says which rows were taken, and the run directory keeps their ids
    assert ("rows taken             20 of 60: a seeded sample balanced by label (seed 3); ids in "
            f"{tmp_path / 'cf.jsonl.run' / 'rows_taken.json'}") in err
    kept = json.loads((tmp_path / "cf.jsonl.run" / "rows_taken.json").read_text(encoding="utf-8"))
    assert kept["ids"] == taken and kept["limit"] == 20 and kept["seed"] == 3 and kept["of"] == 60

    cmp = tmp_path / "cmp"
    assert main(["compare", str(sorted_file), "--methods", "word-flip", "-o", str(cmp), "--limit", "20",
                 "--seed", "3", "--workers", "1", "--no-embedding", "--no-bertscore", "--no-progress"]) == 0
    capsys.readouterr()
    assert ids_of(cmp / "sample.jsonl", "id") == taken
    summary = json.loads((cmp / "summary.json").read_text(encoding="utf-8"))
    assert summary["data"]["rows_taken"] == "20 of 60: a seeded sample balanced by label (seed 3)"
    assert "Rows: 20 of 60: a seeded sample balanced by label (seed 3)" in (cmp / "summary.md").read_text()

    # a larger limit on the same run directory keeps every item and adds the new ones
    assert main(["augment", str(sorted_file), "-o", str(out), "--method", "word-flip", "--limit", "30",
                 "--seed", "3", "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "work items             30  (20 already done)" in err
    assert set(taken) < set(ids_of(out, "source_id"))
    # without a limit every row is taken, the summary has no such line, and no stale list is left
    assert main(["augment", str(sorted_file), "-o", str(out), "--method", "word-flip", "--seed", "3",
                 "--workers", "1", "--no-progress"]) == 0
    assert "rows taken" not in capsys.readouterr().err
    assert not (tmp_path / "cf.jsonl.run" / "rows_taken.json").exists()
