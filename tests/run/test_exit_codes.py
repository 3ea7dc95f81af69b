"""How a run ends when items fail: the summary names the failures, the command's exit code tells a script
(0 success, 2 a configuration problem, stopping before any item, 4 some items failed, 5 items failed and
nothing was written), and the Python API reports the same in the summary's fields."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass

import pytest

from cfaug.api import augment, run_augment
from cfaug.cli import main
from cfaug.config import ConfigError
from cfaug.data.records import Counterfactual
from cfaug.methods.base import METHODS, Method
from cfaug.registry import Entry


@dataclass
class NoParams:
    pass


class Breaks(Method):
    """Appends " (flipped)"; a text with EXPLODE raises a RuntimeError (that item fails), one with CONFIG a
    ConfigError (the run stops)."""

    name = "breaks.v1"
    Config = NoParams
    supported_tasks = ("sentiment",)
    default_batch_size = 2
    calls: list[list[str]] = []

    def generate(self, items, task):
        Breaks.calls.append([it.record.id for it in items])
        out = []
        for it in items:
            text = it.record.text()
            if "CONFIG" in text:
                raise ConfigError("the service this method needs is not configured")
            if "EXPLODE" in text:
                raise RuntimeError(f"cannot edit {it.record.id}")
            out.append([Counterfactual(it.record, {"text": text + " (flipped)"}, it.target, self.name, {})])
        return out


class AsyncBreaks(Breaks):
    name = "async-breaks.v1"
    work_unit = "item"

    async def agenerate(self, item, task):
        return Breaks.generate(self, [item], task)[0]


class LoadFails(Breaks):
    """Trains (nothing), then cannot load what it trained: a set-up error before any item."""

    name = "load-fails.v1"
    trains = True

    def fit(self, records, task, ctx):
        return {}

    def load(self, artifact_dir, task, ctx):
        raise ConfigError("the classifier this method loads cannot be used")


@pytest.fixture(autouse=True)
def registered(monkeypatch, tmp_path):
    for cls in (Breaks, AsyncBreaks, LoadFails):
        monkeypatch.setitem(METHODS._entries, cls.name, Entry(cls.name, "test method", cls))
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    Breaks.calls = []


def reviews(tmp_path, *texts):
    f = tmp_path / "in.csv"
    f.write_text("id,text,label\n" + "".join(f"{chr(97 + n)},{t},pos\n" for n, t in enumerate(texts)),
                 encoding="utf-8")
    return f


def augment_cli(inp, tmp_path, method, capsys):
    out = tmp_path / "out" / "o.jsonl"
    code = main(["augment", str(inp), "-o", str(out), "--method", method, "--no-progress", "--workers", "1"])
    captured = capsys.readouterr()
    return code, out, captured.out, captured.err


@pytest.mark.parametrize("method", ["breaks", "async-breaks"])
def test_a_run_whose_every_item_fails_exits_5_and_names_the_first_error(tmp_path, capsys, method):
    inp = reviews(tmp_path, "EXPLODE one", "EXPLODE two", "EXPLODE three")
    code, out, stdout, err = augment_cli(inp, tmp_path, method, capsys)
    assert code == 5, err
    assert re.search(r"items failed +3 +\(first: RuntimeError: cannot edit a; errors in results\.jsonl\)", err)
    assert re.search(r"status +complete, with FAILED ITEMS: 3 of 3 failed and no counterfactual was written", err)
    assert json.loads(stdout)["failed"] == 3 and json.loads(stdout)["counterfactuals"] == 0
    assert out.read_text() == ""
    summary = json.loads((out.parent / "o.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 3 and summary["first_error"] == "RuntimeError: cannot edit a"
    assert summary["complete"] is True


@pytest.mark.parametrize("method", ["breaks", "async-breaks"])
def test_a_run_where_some_items_fail_exits_4_and_writes_the_others(tmp_path, capsys, method):
    inp = reviews(tmp_path, "a fine film", "EXPLODE here", "a dull plot")
    code, out, stdout, err = augment_cli(inp, tmp_path, method, capsys)
    assert code == 4, err
    assert re.search(r"items failed +1 +\(first: RuntimeError: cannot edit b; errors in results\.jsonl\)", err)
    assert [json.loads(x)["source_id"] for x in out.read_text().splitlines()] == ["a", "c"]
    assert augment_cli(inp, tmp_path, method, capsys)[0] == 4  # a plain rerun keeps the failure, and the code


def test_a_run_without_failures_exits_0(tmp_path, capsys):
    code, _, stdout, err = augment_cli(reviews(tmp_path, "a fine film", "a dull plot"), tmp_path, "breaks", capsys)
    assert code == 0, err
    assert "items failed" not in err and re.search(r"status +complete$", err, re.M)
    assert json.loads(stdout)["failed"] == 0


@pytest.mark.parametrize("method", ["breaks", "async-breaks"])
def test_a_configuration_error_inside_an_item_stops_the_run_with_exit_2(tmp_path, capsys, method):
    """A ConfigError would fail every item alike: it stops the run with its message instead of being
    recorded as one failed item after another."""
    inp = reviews(tmp_path, "CONFIG one", "CONFIG two", "CONFIG three", "CONFIG four")
    code, out, _, err = augment_cli(inp, tmp_path, method, capsys)
    assert code == 2
    assert err.strip().splitlines()[-1] == "cfaug: error: the service this method needs is not configured"
    assert "Traceback" not in err
    results = out.parent / "o.jsonl.run" / "results.jsonl"
    lines = [json.loads(x) for x in results.read_text().splitlines()] if results.exists() else []
    assert lines == []  # nothing recorded as failed (the run directory this run made is removed)
    if method == "breaks":
        assert Breaks.calls == [["a", "b"]]  # the first batch, not retried item by item, and no other batch


def test_a_configuration_error_in_the_methods_set_up_stops_before_any_item(tmp_path, capsys):
    inp = reviews(tmp_path, "a fine film", "a dull plot")
    code, out, _, err = augment_cli(inp, tmp_path, "load-fails", capsys)
    assert code == 2
    assert err.strip().splitlines()[-1] == "cfaug: error: the classifier this method loads cannot be used"
    assert Breaks.calls == []  # no item was run
    assert not out.exists() and not (out.parent / "o.jsonl.run" / "results.jsonl").exists()


def test_the_python_api_reports_failures_in_the_summary(tmp_path):
    rows = [{"id": "a", "text": "a fine film", "label": "pos"}, {"id": "b", "text": "EXPLODE", "label": "pos"}]
    summary, out = run_augment(rows, "breaks", run_dir=str(tmp_path / "run"), progress=False, workers=1)
    assert summary.complete and summary.items_failed == 1 and summary.counterfactuals_written == 1
    assert summary.first_error == "RuntimeError: cannot edit b" and len(out) == 1
    with pytest.warns(RuntimeWarning, match=r"1 of 2 items failed \(first: RuntimeError: cannot edit b\)"):
        ds = augment(rows, "breaks", workers=1)
    assert ds.num_rows == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert augment(rows[:1], "breaks", workers=1).num_rows == 1  # nothing failed: no warning
    with pytest.raises(ConfigError, match="not configured"):
        run_augment([{"text": "CONFIG", "label": "pos"}], "breaks", run_dir=str(tmp_path / "r2"), progress=False)


def llm_methods() -> list[str]:
    """Every registered LLM method that rewrites sentiment texts."""
    from cfaug.methods.llm_method import LLMMethod

    return [e.name for e in METHODS.entries()
            if isinstance(e.obj, type) and issubclass(e.obj, LLMMethod) and "sentiment" in e.obj.supported_tasks]


@pytest.mark.usefixtures("isolated_llm_cache")
@pytest.mark.parametrize("method", llm_methods())
def test_an_llm_run_whose_every_answer_is_unreadable_exits_0_with_every_item_none_whatever_the_method(
        tmp_path, capsys, method):
    """One rule for every LLM method: an item without a single readable answer gets no counterfactual (the model
    answered: no failure), with the reason and ``details.unreadable`` in its line (--retry-failed draws it again),
    so a run where no answer was readable exits 0, counts every item under "items with none" and writes nothing."""
    from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

    inp = tmp_path / "in.csv"
    inp.write_text("id,text,label\na,a fine film with a warm heart,pos\nb,a dull plot and a tired cast,neg\n",
                   encoding="utf-8")
    out = tmp_path / "out" / "o.jsonl"
    with FakeLLM(default_reply="I am sorry, I cannot say.") as srv:
        code = main(["augment", str(inp), "-o", str(out), "--method", method, "--no-progress",
                     "--llm-base-url", srv.base_url, "--llm-model", "test-model", "-p", "flip_check=none",
                     "-p", "parse_retries=0",
                     *(["-p", "mode=llm"] if method == "coba.v1" else [])])  # coba asks a model only in its llm mode
        assert srv.count() > 0  # the model was asked
    captured = capsys.readouterr()
    err = captured.err
    assert code == 0, err
    assert "FAILED ITEMS" not in err and not re.search(r"items failed +[1-9]", err)
    assert re.search(r"items with none +2\b", err), err
    assert json.loads(captured.out)["failed"] == 0 and json.loads(captured.out)["counterfactuals"] == 0
    lines = [json.loads(x) for x in (out.parent / "o.jsonl.run" / "results.jsonl").read_text().splitlines()]
    assert [line["status"] for line in lines] == ["no_counterfactual", "no_counterfactual"]
    assert all("error" not in line and line["counterfactuals"] == [] for line in lines)
    assert all("no readable" in line["reason"] for line in lines), [line["reason"] for line in lines]
    assert all(line["details"]["unreadable"] is True for line in lines)
    assert all("draw" not in line for line in lines)  # a first draw
    summary = json.loads((out.parent / "o.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 0 and sum(summary["without_reasons"].values()) == 2
    assert not out.exists() or out.read_text(encoding="utf-8").strip() == ""  # nothing written
