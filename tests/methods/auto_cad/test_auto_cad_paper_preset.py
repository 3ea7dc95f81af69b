"""auto-CAD's ``paper`` preset: its values, what it needs, and what it does on the fixture."""

from __future__ import annotations

import json

import pytest

from cfaug.config import ConfigError
from cfaug.data.io import read_dataset
from cfaug.data.records import WorkItem
from cfaug.data.tasks import make_task
from cfaug.methods import build_method, method_params
from cfaug.editing.text import tokenize
from cfaug.training.context import FitContext, StageContext


@pytest.fixture(scope="module")
def task():
    return make_task("sentiment")


@pytest.fixture(scope="module")
def paper(tiny_mlm_dir, sentiment_tsv, task, tmp_path_factory):
    records = read_dataset(sentiment_tsv, task).records
    m = build_method("auto-cad", {"mlm": str(tiny_mlm_dir)}, preset="paper")
    art = tmp_path_factory.mktemp("paper-artifacts")
    m.fit(records, task, FitContext(artifact_dir=art, progress=False))
    m.load(art, task, StageContext())
    items = [WorkItem(r, t) for r in records[:10] for t in task.targets(r)]
    return m, items, m.generate(items, task)


def test_the_paper_preset_pins_the_papers_values(tiny_mlm_dir):
    c = build_method("auto-cad", {"mlm": str(tiny_mlm_dir)}, preset="paper").config
    assert (c.variants, c.rm_terms, c.rep_selection, c.contexts) == ("rm,rep,syn", "top-per-sentence", "eq1", "lm")
    assert c.min_moverscore == 0.55 and c.max_edit_rate is None and c.require_flip is False
    assert c.folds == 1 and c.replace == "all" and c.min_similarity == 0 and c.tagger == "none"
    assert c.context_samples == 20


def test_the_default_preset_is_the_configs_defaults():
    assert method_params("auto-cad", {"folds": 3}, "default") == {"folds": 3}
    assert build_method("auto-cad", {}, preset="default").config == build_method("auto-cad", {}).config


def test_the_paper_preset_says_what_it_needs_and_flags_override_it(tiny_mlm_dir):
    with pytest.raises(ConfigError, match=r"preset paper of auto-cad.v1 needs mlm: a masked LM by local path"):
        build_method("auto-cad", {}, preset="paper")
    with pytest.raises(ConfigError, match=r"auto-cad.v1 has no preset 'papr'; presets: default, paper"):
        build_method("auto-cad", {}, preset="papr")
    c = build_method("auto-cad", {"mlm": str(tiny_mlm_dir), "min_moverscore": "0.6"}, preset="paper").config
    assert c.min_moverscore == 0.6 and c.variants == "rm,rep,syn"


def test_paper_filters_are_moverscore_only(paper):
    m, _, _ = paper
    assert [type(f).__name__ for f in m.filters] == [type(f).__name__ for f in m.filters
                                                     if "mover" in type(f).__name__.lower()]
    assert len(m.filters) == 1


def test_rm_ct_removes_each_sentences_most_important_term_once(paper):
    _, items, results = paper
    seen = 0
    for item, cfs in zip(items, results):
        for cf in cfs:
            if cf.meta["variant"] != "rm-ct":
                continue
            seen += 1
            tokens = tokenize(item.record.text())
            removed = cf.meta["edits"]
            sentences = {t.sentence for t in tokens for e in removed if t.start == e["start"]}
            assert removed and len(sentences) == len(removed)  # at most one removal per sentence
            assert len(cf.meta["causal_terms"]) == len(removed)
    assert seen >= 5


def test_rep_ct_records_each_eq1_choice(paper):
    _, _, results = paper
    reps = [cf for cfs in results for cf in cfs if cf.meta["variant"] == "rep-ct"]
    assert reps
    for cf in reps:
        chosen = [c for c in cf.meta["choices"] if "new" in c]
        assert chosen and all("eq1" in c for c in chosen)
        # the tiny MLM's opposite-polarity words only
        assert all(c["new"] in {"great", "awful", "terrible"} or c["candidates"] > 0 for c in chosen)
        assert "moverscore" in cf.meta["filters"] or any("mover" in k for k in cf.meta["filters"])


def test_a_run_records_the_preset_and_the_values_it_set(tmp_path, sentiment_tsv, tiny_mlm_dir):
    from cfaug.api import run_augment

    out, run = tmp_path / "o.jsonl", tmp_path / "run"
    run_augment(str(sentiment_tsv), output=out, preset="paper", params={"mlm": str(tiny_mlm_dir)}, limit=4,
                progress=False, run_dir=str(run))
    manifest = json.loads((run / "manifest.json").read_text())
    config = json.loads((run / "config.json").read_text())
    assert manifest["options"]["preset"] == "paper"
    assert config["params"]["min_moverscore"] == 0.55 and config["params"]["rep_selection"] == "eq1"
