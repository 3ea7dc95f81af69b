"""The Ray engine on an in-process 2-CPU cluster, with two small methods defined here: it must give the
local engine's lines, isolate a failing item, ship artifacts an actor cannot see, and report its start-up.

Every test but the first shares one cluster started by this module (never ``ray stop``: that would kill
every Ray process on the machine)."""

from __future__ import annotations

import json
import os
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from cfaug.config import ConfigError  # noqa: E402
from cfaug.data.records import Counterfactual, Record, WorkItem  # noqa: E402
from cfaug.data.schema import Schema  # noqa: E402
from cfaug.data.tasks import make_task  # noqa: E402
from cfaug.methods.base import METHODS, Method, Resources  # noqa: E402
from cfaug.registry import Entry  # noqa: E402
from cfaug.run.engines import Job, make_engine  # noqa: E402
from cfaug.run.engines import ray_engine  # noqa: E402
from cfaug.run.engines.local import LocalEngine  # noqa: E402
from cfaug.run.engines.ray_engine import RayEngine, RayEngineError, pack_artifacts, unpack_artifacts  # noqa: E402

pytestmark = pytest.mark.ray

os.environ.setdefault("OMP_NUM_THREADS", "1")


@dataclass
class UpperConfig:
    pass


class Upper(Method):
    """Upper-cases the text and turns "good" into "bad" (a real word change); record ``r13`` raises."""

    name = "ray-test-upper.v1"
    Config = UpperConfig
    supported_tasks = ("sentiment",)

    def generate(self, items, task):
        out = []
        for it in items:
            if it.record.id == "r13":
                raise RuntimeError(f"cannot edit {it.record.id}")
            out.append([Counterfactual(it.record, {"text": self.rewrite(it.record.text())}, it.target, self.name,
                                       {"passed": True, "seed": self.item_seed(it) % 1000, **self.where()})])
        return out

    def rewrite(self, text):
        return text.replace("good", "bad").upper()

    def where(self):
        return {}


class Suffixed(Upper):
    """Trains: appends the word stored in ``suffix.txt`` of its artifact folder."""

    name = "ray-test-suffix.v1"
    trains = True

    def load(self, artifact_dir, task, ctx):
        self.suffix = (Path(artifact_dir) / "suffix.txt").read_text(encoding="utf-8")
        self.loaded_from = str(artifact_dir)
        return {}

    def rewrite(self, text):
        return f"{text.upper()} {self.suffix}"

    def where(self):
        return {"loaded_from": self.loaded_from}


class Crash(Upper):
    """The worker process dies on record ``r5`` (no exception to catch: as a node lost or an OOM kill)."""

    name = "ray-test-crash.v1"

    def rewrite(self, text):
        if text == "review 5 was good":
            os._exit(1)
        return super().rewrite(text)


class Misconfigured(Upper):
    """Raises a configuration error on record ``r3``: every item would fail the same way."""

    name = "ray-test-misconfigured.v1"

    def rewrite(self, text):
        if text == "review 3 was good":
            raise ConfigError("the service this method needs is not configured")
        return super().rewrite(text)


class LoadMisconfigured(Suffixed):
    """Cannot load its artifacts: a configuration error while an actor builds the method."""

    name = "ray-test-load-misconfigured.v1"

    def load(self, artifact_dir, task, ctx):
        raise ConfigError("the classifier this method loads cannot be used")


SCHEMA = Schema(text_cols={"text": "text"}, label_col="label")
TASK = make_task("sentiment")
ITEMS = [WorkItem(Record(f"r{i}", {"text": f"review {i} was good"}, "positive"), "negative") for i in range(50)]
BATCHES = [ITEMS[i:i + 7] for i in range(0, len(ITEMS), 7)]


@pytest.fixture(scope="module", autouse=True)
def registered():
    """The test methods in the driver's registry; actors receive the classes by value (this module is not
    importable in a Ray worker)."""
    for cls in (Upper, Suffixed, Crash, Misconfigured, LoadMisconfigured):
        METHODS._entries[cls.name] = Entry(cls.name, "test method", cls)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    for cls in (Upper, Suffixed, Crash, Misconfigured, LoadMisconfigured):
        METHODS._entries.pop(cls.name, None)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The model store seen by this process and (inherited when the cluster starts) by every actor."""
    old = os.environ.get("CFAUG_MODEL_STORE")
    path = tmp_path_factory.mktemp("store")
    os.environ["CFAUG_MODEL_STORE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("CFAUG_MODEL_STORE", None)
    else:
        os.environ["CFAUG_MODEL_STORE"] = old


@pytest.fixture(scope="module")
def cluster(store):
    assert not ray.is_initialized()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def job(method="ray-test-upper", artifacts=None, **kw):
    return Job(method=method, params={}, seed=3, task=TASK, schema=SCHEMA, artifacts=artifacts, **kw)


def collect(engine, j, batches=BATCHES):
    lines = []
    facts = engine.execute(j, batches, lines.append)
    return lines, facts


def canonical(lines):
    return sorted(json.dumps(ln, sort_keys=True) for ln in lines)


def test_starts_and_stops_its_own_cluster(store):
    """Without a running cluster the engine starts a private one and shuts it down at the end. The process's
    SIGTERM handler (the command's: stop cleanly, as on Ctrl-C) stays in place; ray.init's would exit."""
    assert not ray.is_initialized()

    def stop_cleanly(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop_cleanly)
    try:
        lines, facts = collect(RayEngine(), job(), BATCHES[:1])
        assert signal.getsignal(signal.SIGTERM) is stop_cleanly
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not ray.is_initialized()
    assert len(lines) == 7 and facts["address"] == "local" and facts["workers"] == 1  # no more actors than batches


@pytest.fixture(scope="module")
def upper_run(cluster):
    return collect(make_engine("ray"), job())


def test_same_lines_as_the_local_engine(upper_run):
    lines, _ = upper_run
    local = []
    LocalEngine(workers=1).execute(job(), BATCHES, local.append)
    assert len(lines) == len(ITEMS) and canonical(lines) == canonical(local)
    by_key = {ln["key"]: ln for ln in lines}
    assert by_key[ITEMS[0].key]["counterfactuals"][0]["text"] == "REVIEW 0 WAS BAD"


def test_a_failing_item_gives_an_error_line_for_that_item_only(upper_run):
    lines, _ = upper_run
    errors = [ln for ln in lines if ln["status"] == "error"]
    assert [ln["source_id"] for ln in errors] == ["r13"]
    assert errors[0]["error"] == "RuntimeError: cannot edit r13"
    assert sum(ln["status"] == "ok" for ln in lines) == 49


def test_facts_report_startup_apart_from_work(upper_run):
    _, facts = upper_run
    assert facts["engine"] == "ray" and facts["workers"] == 2 and facts["ray_version"] == ray.__version__
    assert 0 < facts["startup_seconds"] < 60 and facts["work_seconds"] >= 0
    assert facts["address"] == "running" and facts["artifacts_shipped_bytes"] == 0
    assert facts["resources_per_worker"] == {"cpus": 1, "gpus": 0, "memory_mb": 1024}


def test_workers_setting_is_honoured(cluster):
    lines, facts = collect(RayEngine(workers=1), job(), BATCHES[:3])
    assert facts["workers"] == 1 and len(lines) == 21


@pytest.fixture
def artifacts(tmp_path):
    folder = tmp_path / "fp123"
    (folder / "sub").mkdir(parents=True)
    (folder / "suffix.txt").write_text("shipped", encoding="utf-8")
    (folder / "sub" / "weights.bin").write_bytes(bytes(range(256)))
    return folder


def test_pack_and_unpack_round_trip(artifacts, tmp_path):
    data = pack_artifacts(artifacts)
    out = unpack_artifacts(data, tmp_path / "shipped")
    assert (out / "suffix.txt").read_text() == "shipped"
    assert (out / "sub" / "weights.bin").read_bytes() == bytes(range(256))
    assert unpack_artifacts(data, tmp_path / "shipped") == out  # unpacked once, then reused
    assert [p.name for p in (tmp_path / "shipped").iterdir()] == [out.name]  # no partial folder left
    with pytest.raises(FileNotFoundError):
        pack_artifacts(tmp_path / "missing")


def test_artifacts_visible_to_the_actors_load_in_place(cluster, artifacts):
    lines, facts = collect(RayEngine(), job("ray-test-suffix", str(artifacts)), BATCHES[:2])
    assert facts["artifacts_shipped_bytes"] == 0 and facts["actors_unpacked_artifacts"] == 0
    cf = lines[0]["counterfactuals"][0]
    assert cf["meta"]["loaded_from"] == str(artifacts) and cf["text"].endswith(" shipped")


def test_artifacts_an_actor_cannot_see_are_shipped(cluster, store, artifacts, monkeypatch):
    """The driver packs the folder, then it disappears (as on another node): actors unpack the bytes."""
    hidden = artifacts.with_name("elsewhere")

    def pack_then_hide(folder):
        data = pack_artifacts(folder)
        os.rename(folder, hidden)
        return data

    monkeypatch.setattr(ray_engine, "pack_artifacts", pack_then_hide)
    lines, facts = collect(RayEngine(ship_artifacts=True), job("ray-test-suffix", str(artifacts)), BATCHES[:3])
    assert not artifacts.exists() and facts["artifacts_shipped_bytes"] > 0
    assert facts["actors_unpacked_artifacts"] == facts["workers"] == 2
    assert len(lines) == 21 and all(ln["status"] == "ok" or ln["source_id"] == "r13" for ln in lines)
    cf = lines[0]["counterfactuals"][0]
    assert cf["text"].endswith(" shipped")
    loaded = Path(cf["meta"]["loaded_from"])
    assert loaded.parent == store / ".shipped" and (loaded / "sub" / "weights.bin").exists()


def test_missing_artifacts_fail_clearly(cluster, tmp_path):
    with pytest.raises(RayEngineError, match="could not build ray-test-suffix.*not visible on this node"):
        collect(RayEngine(ship_artifacts=False), job("ray-test-suffix", str(tmp_path / "gone")), BATCHES[:1])


def test_a_dying_actor_stops_the_run_clearly(cluster):
    with pytest.raises(RayEngineError, match="died while running a batch"):
        collect(RayEngine(), job("ray-test-crash"), BATCHES[:1])


def test_a_configuration_error_stops_the_run_as_itself(cluster, artifacts):
    """A ConfigError in a batch or while an actor builds the method is raised as such (the command exits
    2 with its message), not recorded per item nor reported as a cluster failure."""
    lines = []
    with pytest.raises(ConfigError, match="not configured"):
        RayEngine().execute(job("ray-test-misconfigured"), BATCHES[:1], lines.append)
    assert lines == []
    with pytest.raises(ConfigError, match="cannot be used"):
        RayEngine().execute(job("ray-test-load-misconfigured", str(artifacts)), BATCHES[:1], lines.append)
    assert lines == []


def test_gpus_the_cluster_lacks_fail_before_starting_actors(cluster):
    j = replace(job(), device="cuda:0", resources=Resources(gpus=1))
    with pytest.raises(RayEngineError, match="cluster has 0 GPUs"):
        collect(RayEngine(), j, BATCHES[:1])


def test_missing_ray_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r'pip install "cfaug\[ray\]"'):
        RayEngine().execute(job(), BATCHES[:1], lambda line: None)
