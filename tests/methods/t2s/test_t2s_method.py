"""The t2s method end to end at a toy scale: every training step writes its artifact, a rerun skips finished
steps, generation gives ASTE rows with spans and scores, and the CLI reads and writes ASTE-Data-V2 lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cfaug.data.aste import parse_line, parse_triplets
from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.methods.t2s import T2S, T2SConfig
from cfaug.training.context import FitContext, StageContext

ASPECTS = ["food", "service", "staff", "pizza", "wine", "menu", "waiter", "dessert"]
POSITIVE = ["great", "good", "friendly", "tasty"]
NEGATIVE = ["bad", "slow", "rude", "cold"]


def _lines(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.sample(ASPECTS, 2)
        pa, pb = rng.choice(["POS", "NEG"]), rng.choice(["POS", "NEG"])
        oa = rng.choice(POSITIVE if pa == "POS" else NEGATIVE)
        ob = rng.choice(POSITIVE if pb == "POS" else NEGATIVE)
        if rng.random() < 0.6:
            out.append(f"the {a} was {oa} .####[([1], [3], '{pa}')]")
        else:
            out.append(f"the {a} was {oa} but the {b} was {ob} .####[([1], [3], '{pa}'), ([6], [8], '{pb}')]")
    return out


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    d = tmp_path_factory.mktemp("t2s")
    train = d / "train.txt"
    train.write_text("\n".join(_lines(40, 0)) + "\n")
    unlabeled = d / "unlabeled.txt"
    unlabeled.write_text("\n".join(parse_line(x).sentence for x in _lines(40, 1)) + "\n")
    return d, train, unlabeled


def _config(unlabeled: Path, **kw) -> T2SConfig:
    base = dict(unlabeled=str(unlabeled), min_confidence=0.0, extractor_epochs=2, d_model=32, layers=1,
                generator_epochs=2, mixed_pairs=30, discriminator_epochs=1, ppo_steps=2, batch_size=8,
                candidates=3, keep=2, min_alignment=0.0, min_fluency=0.0, max_new_tokens=12)
    base.update(kw)
    return T2SConfig(**base)


def _records(path: Path) -> list[Record]:
    from cfaug.data.io import read_dataset

    return read_dataset(path, make_task("aste")).records


def test_fit_generate_and_resume(toy, tmp_path):
    d, train, unlabeled = toy
    task = make_task("aste")
    records = _records(train)
    method = T2S(_config(unlabeled), seed=0)
    logs: list[str] = []
    ctx = FitContext(seed=0, progress=False, log=logs.append, artifact_dir=tmp_path)
    facts = method.fit(records, task, ctx)
    for name in ("extractor", "generator_sl", "fluency", "alignment", "generator", "pool.jsonl", "stages.json"):
        assert (tmp_path / name).exists(), name
    assert set(facts) >= {"extractor", "pool", "generator_sl", "fluency", "alignment", "ppo"}
    assert facts["pool"]["train"] == 40 and facts["pool"]["pool"] >= 40
    assert facts["ppo"]["steps"] == 2
    pool = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert all(e["template"] and e["template"].startswith("root") for e in pool)

    # a second fit finds every step done and trains nothing
    again = T2S(_config(unlabeled), seed=0)
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert again.fit(records, task, FitContext(seed=0, progress=False, log=logs.append, artifact_dir=tmp_path)) == facts
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file() and p in before} == before

    method.load(tmp_path, task, StageContext(progress=False))
    items = [WorkItem(r, r.label) for r in records[:6]]
    out = method.generate(items, task)
    assert len(out) == 6
    cfs = [cf for per in out for cf in per]
    assert cfs, "no candidate generated"
    for cf in cfs:
        meta = cf.meta
        assert {"label_sequence", "label_parent", "template", "template_parent", "alignment", "fluency",
                "filters", "passed"} <= set(meta)
        assert 0.0 <= meta["alignment"] <= 1.0 and 0.0 <= meta["fluency"] <= 1.0
        if meta["filters"]["terms"]:
            tokens = cf.fields["text"].split()
            for t in parse_triplets(cf.target):
                assert t.max_index() < len(tokens)
    for per in out:
        assert sum(cf.passed for cf in per) <= 2
    # the same items give the same sentences (seeded per item)
    again.load(tmp_path, task, StageContext(progress=False))
    assert [[cf.fields["text"] for cf in per] for per in again.generate(items, task)] == \
        [[cf.fields["text"] for cf in per] for per in out]


def test_labels_and_templates_from_the_training_data(toy, tmp_path):
    d, train, unlabeled = toy
    task = make_task("aste")
    records = _records(train)
    method = T2S(_config(unlabeled, ppo_steps=0, label_source="record", template_source="train"), seed=0)
    method.fit(records, task, FitContext(seed=0, progress=False, log=lambda m: None, artifact_dir=tmp_path))
    method.load(tmp_path, task, StageContext(progress=False))
    items = [WorkItem(r, r.label) for r in records[:8]]
    n = 0
    for item, per in zip(items, method.generate(items, task)):
        for cf in per:
            n += 1
            assert cf.meta["label_parent"] == f"t{item.record.id}"
            assert cf.meta["template_parent"] != cf.meta["label_parent"]
            assert cf.meta["template_parent_source"] == "train"
    assert n > 0
    method.config.label_source = "train"
    for per in method.generate(items, task):
        assert all(cf.meta["label_parent_source"] == "train" for cf in per)


def test_cli_train_and_augment_write_aste_lines(toy, tmp_path, cli):
    # the command line run in this process: a child process would load torch, transformers, spaCy and the
    # packaged encoder again for each command
    d, train, unlabeled = toy
    model = tmp_path / "model"
    params = ["-p", f"unlabeled={unlabeled}", "-p", "min_confidence=0", "-p", "extractor_epochs=1",
              "-p", "d_model=32", "-p", "layers=1", "-p", "generator_epochs=1", "-p", "mixed_pairs=20",
              "-p", "discriminator_epochs=1", "-p", "ppo_steps=1", "-p", "batch_size=8"]
    code, _, err = cli("train", "t2s", "--task", "aste", "--train-data", train, "-o", model, "--no-progress",
                       *params)
    assert code == 0, err
    out = tmp_path / "aug.txt"
    code, _, err = cli("augment", train, "--task", "aste", "--method", "t2s", "--model", model, "-o", out,
                       "--no-progress", "--limit", "5", "--run-dir", tmp_path / "run", *params, "-p", "candidates=2",
                       "--keep-failed")
    assert code == 0, err
    lines = [x for x in out.read_text().splitlines() if x.strip()]
    assert 5 <= len(lines) <= 10  # two candidates for each of 5 records, duplicates of a record's sentence aside
    for line in lines:
        parse_line(line)  # valid ASTE-Data-V2: every span inside its sentence (none when the terms are missing)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["complete"] and summary["rows_rejected"] == 0


def test_a_changed_parameter_redoes_its_step_and_those_after(toy, tmp_path):
    d, train, unlabeled = toy
    task = make_task("aste")
    records = _records(train)
    ctx = FitContext(seed=0, progress=False, log=lambda m: None, artifact_dir=tmp_path)
    T2S(_config(unlabeled, ppo_steps=1), seed=0).fit(records, task, ctx)
    stamp = lambda name: (tmp_path / name).stat().st_mtime_ns  # noqa: E731
    before = {n: stamp(n) for n in ("extractor", "pool.jsonl", "generator_sl", "fluency", "generator")}
    facts = T2S(_config(unlabeled, ppo_steps=2), seed=0).fit(records, task, ctx)
    assert facts["ppo"]["steps"] == 2
    after = {n: stamp(n) for n in before}
    assert all(after[n] == before[n] for n in ("extractor", "pool.jsonl", "generator_sl", "fluency"))
    assert after["generator"] != before["generator"]
    facts = T2S(_config(unlabeled, ppo_steps=2, generator_epochs=1), seed=0).fit(records, task, ctx)
    assert facts["generator_sl"]["epochs"] == 1
    assert stamp("extractor") == before["extractor"] and stamp("pool.jsonl") == before["pool.jsonl"]
    assert stamp("fluency") != before["fluency"]
    # the reward's scale is a PPO parameter: only PPO is redone, and its record holds what the reward is made of
    fluency = stamp("fluency")
    config = _config(unlabeled, ppo_steps=2, generator_epochs=1, reward_scale="logit")
    facts = T2S(config, seed=0).fit(records, task, ctx)
    assert stamp("fluency") == fluency
    ppo = facts["ppo"]
    assert ppo["reward_scale"] == "logit"
    for key in ("reward", "alignment", "fluency", "length_penalty"):
        assert ppo[f"{key}_first_tenth"] is not None and ppo[f"{key}_last_tenth"] is not None
    assert 0.0 <= ppo["alignment_first_tenth"] <= 1.0 and 0.0 <= ppo["fluency_first_tenth"] <= 1.0
    history = json.loads((tmp_path / "ppo" / "ppo_history.json").read_text())
    assert {"fluency_logit", "alignment_logit"} <= set(history[0])


def test_a_folder_recorded_before_reward_scale_keeps_its_ppo_step(tmp_path):
    from cfaug.methods.t2s.pipeline import FACTS_FILE, STEPS_KEY

    records = [Record("1", {"text": "the food was great ."}, "[([1], [3], 'POS')]")]
    ctx = FitContext(seed=0, progress=False, log=lambda m: None, artifact_dir=tmp_path)

    def invalidate(config):
        return T2S(config, seed=0).step_record(records, ctx).facts

    facts = invalidate(T2SConfig())
    facts["ppo"] = {"steps": 1}
    del facts[STEPS_KEY]["ppo"]["reward_scale"]  # as a folder made before the parameter existed records it
    (tmp_path / FACTS_FILE).write_text(json.dumps(facts))
    (tmp_path / "generator").mkdir()
    assert "ppo" in invalidate(T2SConfig()) and (tmp_path / "generator").exists()  # made with probabilities
    facts = invalidate(T2SConfig(reward_scale="logit"))
    assert "ppo" not in facts and not (tmp_path / "generator").exists()
    assert facts[STEPS_KEY]["ppo"]["reward_scale"] == "logit"


def test_a_folder_recorded_with_the_old_training_data_hash_keeps_its_steps(tmp_path):
    """Folders made before t2s used cfaug.training.steps hashed the training data their own way (a bare hex
    digest): the same data keeps every step, other data redoes them all."""
    import hashlib

    from cfaug.data.fingerprint import hash_records
    from cfaug.methods.t2s.pipeline import FACTS_FILE, STEPS_KEY

    records = [Record("1", {"text": "the food was great ."}, "[([1], [3], 'POS')]")]
    ctx = FitContext(seed=0, progress=False, log=lambda m: None, artifact_dir=tmp_path)
    facts = T2S(T2SConfig(), seed=0).step_record(records, ctx).facts
    old = hashlib.sha256(f"{records[0].id}\0{records[0].text()}\0{records[0].label}\n".encode()).hexdigest()
    for made in facts[STEPS_KEY].values():
        assert made["train_sha256"] == hash_records(records)
        made["train_sha256"] = old
    facts["extractor"] = {"epochs": 1}
    (tmp_path / FACTS_FILE).write_text(json.dumps(facts))
    (tmp_path / "extractor").mkdir()
    facts = T2S(T2SConfig(), seed=0).step_record(records, ctx).facts
    assert facts["extractor"] == {"epochs": 1} and (tmp_path / "extractor").exists()
    assert json.loads((tmp_path / FACTS_FILE).read_text())[STEPS_KEY]["ppo"]["train_sha256"] == hash_records(records)
    other = [Record("1", {"text": "the food was bad ."}, "[([1], [3], 'NEG')]")]
    facts = T2S(T2SConfig(), seed=0).step_record(other, ctx).facts
    assert "extractor" not in facts and not (tmp_path / "extractor").exists()
