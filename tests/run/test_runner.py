"""The runner with two small methods defined here (a batched and an async word swapper), so that every
figure it reports can be checked by hand. auto-CAD end to end is covered in tests/cli and tests/test_api."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from cfaug.data.io import DataError
from cfaug.data.records import Counterfactual, NoCounterfactual
from cfaug.methods.base import METHODS, Method
from cfaug.registry import Entry
from cfaug.run.results import SAME_WORDS
from cfaug.run.rundir import RunDirError
from cfaug.run.runner import RunOptions, run

SWAP = {"good": "bad", "bad": "good", "great": "awful", "awful": "great", "is": "is not", "are": "are not"}


@dataclass
class SwapConfig:
    drop_unchanged: bool = False  #: mark rewrites that changed nothing as failed (meta.passed = False)
    fail_word: str = ""  #: mark rewrites of texts holding this word as failed, as a filter would


class WordSwap(Method):
    """Swaps a few opinion words and negates "is" and "are"; a text containing EXPLODE raises, one with
    NOTHING yields no candidate. A text with none of these words comes back unchanged (row f): the runner
    never writes it."""

    name = "word-swap.v1"
    Config = SwapConfig
    supported_tasks = ("sentiment", "rating", "nli")
    default_batch_size = 3
    calls: list[list[str]] = []

    def generate(self, items, task):
        WordSwap.calls.append([it.record.id for it in items])
        out = []
        for it in items:
            text = " ".join(it.record.fields.values())
            if "EXPLODE" in text:
                raise RuntimeError(f"cannot edit {it.record.id}")
            if "NOTHING" in text:
                out.append(NoCounterfactual("nothing to swap"))
                continue
            fields = dict(it.record.fields)
            for role in task.edit_roles:
                fields[role] = " ".join(SWAP.get(w, w) for w in fields[role].split())
            changed = fields != it.record.fields
            passed = (changed or not self.config.drop_unchanged) and not (
                self.config.fail_word and self.config.fail_word in text.split())
            out.append([Counterfactual(it.record, fields, it.target, self.name,
                                       {"passed": passed, "seed": self.item_seed(it) % 1000,
                                        "own_judge": {"name": "swap", "flipped": changed}})])
        return out


class AsyncWordSwap(WordSwap):
    name = "async-word-swap.v1"
    work_unit = "item"

    async def agenerate(self, item, task):
        return WordSwap.generate(self, [item], task)[0]


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    for cls in (WordSwap, AsyncWordSwap):
        monkeypatch.setitem(METHODS._entries, cls.name, Entry(cls.name, "test method", cls))
    WordSwap.calls = []


@pytest.fixture
def reviews(tmp_path):
    f = tmp_path / "reviews.csv"
    f.write_text("id,text,label,split\n"
                 "a,a good film,pos,train\n"
                 "b,an awful plot,neg,train\n"
                 "c,EXPLODE good,pos,test\n"
                 "d,,neg,test\n"
                 "e,NOTHING here,neg,test\n"
                 "f,plain words,pos,test\n"
                 "g,great fun,bad-label,test\n", encoding="utf-8")
    return f


def go(source, tmp_path, method="word-swap", out="out.jsonl", **opts):
    opts.setdefault("progress", False)
    opts.setdefault("workers", 1)  # in-process, so that WordSwap.calls sees every call
    return run(source, RunOptions(method=method, run_dir=str(tmp_path / "run"), **opts),
               output=tmp_path / out if out else None, log=lambda m: None)


@pytest.mark.parametrize("method", ["word-swap", "async-word-swap"])
def test_results_summary_and_output(reviews, tmp_path, method):
    summary, rows = go(reviews, tmp_path, method=method)
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    by_id = {ln["source_id"]: ln for ln in lines}
    assert sorted(by_id) == ["a", "b", "c", "e", "f"] and len(lines) == 5
    assert by_id["c"]["status"] == "error" and "RuntimeError: cannot edit c" in by_id["c"]["error"]
    assert by_id["e"]["status"] == "no_counterfactual" and by_id["a"]["status"] == "ok"
    # f's rewrite holds its source's words: it is no counterfactual, and nothing is written under the target label
    assert by_id["f"]["status"] == "no_counterfactual" and by_id["f"]["reason"] == SAME_WORDS
    assert by_id["f"]["counterfactuals"] == []
    assert by_id["a"]["key"] == "a\u241fnegative"
    assert [(r["source_id"], r["text"], r["label"]) for r in rows] == [
        ("a", "a bad film", "neg"), ("b", "an great plot", "pos")]  # input's spelling
    assert rows[0]["original_text"] == "a good film" and rows[0]["original_label"] == "pos"
    assert rows[0]["split"] == "train" and rows[0]["method"] == f"{method}.v1"
    assert (summary.rows_read, summary.rows_rejected, summary.items, summary.items_failed,
            summary.items_without_counterfactual, summary.counterfactuals_written) == (7, 2, 5, 1, 2, 2)
    assert summary.without_reasons == {"nothing to swap": 1, SAME_WORDS: 1}
    assert summary.flip_rate_own_judge == pytest.approx(1.0) and summary.own_judge == "swap"
    written = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == rows
    assert list(written[0]) == ["text", "label", "source_id", "original_text", "original_label", "method",
                                "split", "meta"]


def test_rejects_file_and_counts(reviews, tmp_path):
    summary, _ = go(reviews, tmp_path)
    rejects = [json.loads(x) for x in (tmp_path / "run" / "rejects.jsonl").read_text().splitlines()]
    assert [(r["source"], r["row"], r["problem"]) for r in rejects] == [
        (str(reviews), 4, "empty text in column 'text'"),
        (str(reviews), 7, "unknown label 'bad-label'; expected one of negative, positive in column 'label'")]
    assert summary.rejects_file == str(tmp_path / "run" / "rejects.jsonl")
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["rows_rejected"] == 2
    assert any("rows rejected          2" in ln for ln in summary.lines())


def test_a_failing_batch_is_retried_item_by_item(reviews, tmp_path):
    go(reviews, tmp_path)
    # batch_size 3: [a, b, c] fails on c, then a, b, c run alone; [e, f] runs as a batch
    assert WordSwap.calls == [["a", "b", "c"], ["a"], ["b"], ["c"], ["e", "f"]]


def test_manifest_and_config(reviews, tmp_path):
    go(reviews, tmp_path, seed=7)
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert cfg["method"] == "word-swap.v1" and cfg["seed"] == 7
    assert cfg["params"] == {"drop_unchanged": False, "fail_word": ""}
    assert cfg["schema"] == {"text_cols": {"text": "text"}, "label_col": "label", "id_col": "id"}
    assert cfg["input_hash"] == man["input_hash"] and man["input_hash"].startswith("sha256:")
    assert man["seed"] == 7 and man["versions"]["cfaug"] and man["finished"]
    assert man["summary"]["counterfactuals_written"] == 2


def test_resuming_skips_finished_items(reviews, tmp_path):
    go(reviews, tmp_path)
    first = (tmp_path / "run" / "results.jsonl").read_text()
    WordSwap.calls = []
    summary, rows = go(reviews, tmp_path, out="again.jsonl")
    assert WordSwap.calls == [] and summary.items_resumed == 5
    assert (tmp_path / "run" / "results.jsonl").read_text() == first
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "out.jsonl").read_text()


def test_a_partial_run_is_completed_without_duplicates(reviews, tmp_path):
    go(reviews, tmp_path)
    results = tmp_path / "run" / "results.jsonl"
    full = results.read_text().splitlines(keepends=True)
    results.write_text("".join(full[1:3]) + full[3][:10])  # two items kept, a torn third line
    WordSwap.calls = []
    summary, _ = go(reviews, tmp_path, out="again.jsonl")
    assert summary.items_resumed == 2
    keys = [json.loads(x)["key"] for x in results.read_text().splitlines()]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 5
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "out.jsonl").read_text()


def test_seed_reaches_the_method_and_different_config_is_refused(reviews, tmp_path):
    _, rows = go(reviews, tmp_path, seed=3)
    _, rows_again = go(reviews, tmp_path / "other", seed=3)
    assert [r["meta"]["seed"] for r in rows] == [r["meta"]["seed"] for r in rows_again]
    with pytest.raises(RunDirError, match=r"differs in: seed\)"):
        go(reviews, tmp_path, seed=4)
    with pytest.raises(RunDirError, match=r"differs in: params.drop_unchanged\)"):
        go(reviews, tmp_path, seed=3, params={"drop_unchanged": "true"})
    _, rows4 = go(reviews, tmp_path, seed=4, overwrite=True)
    assert [r["meta"]["seed"] for r in rows4] != [r["meta"]["seed"] for r in rows]


def test_a_changed_input_is_refused(reviews, tmp_path):
    go(reviews, tmp_path)
    reviews.write_text(reviews.read_text() + "h,good,pos,test\n")
    with pytest.raises(RunDirError, match=r"differs in: input_hash\)"):
        go(reviews, tmp_path)


def test_keep_failed_also_writes_filtered_candidates(reviews, tmp_path):
    params = {"drop_unchanged": True, "fail_word": "awful"}  # b's rewrite fails; f's is unchanged and failed
    summary, rows = go(reviews, tmp_path, params=params)
    assert [r["source_id"] for r in rows] == ["a"] and summary.candidates_filtered_out == 1
    assert summary.without_reasons == {"nothing to swap": 1, SAME_WORDS: 1,
                                       "every candidate was rejected by the method's own checks": 1}
    summary, kept = go(reviews, tmp_path / "k", params=params, keep_failed=True)
    # an unchanged rewrite is no candidate at all: not written even with keep_failed
    assert [(r["source_id"], r["meta"]["passed"]) for r in kept] == [("a", True), ("b", False)]
    assert summary.counterfactuals_written == 2 and summary.without_reasons[SAME_WORDS] == 1


def test_limit_takes_a_seeded_sample_balanced_by_label(reviews, tmp_path):
    # valid rows a (pos), b (neg), c (pos, raises), e (neg), f (pos): one of each label, in input order
    summary, rows = go(reviews, tmp_path, limit=2)
    assert summary.items == 2 and summary.items_failed == 1 and [r["source_id"] for r in rows] == ["b"]
    assert summary.rows_taken == (f"2 of 5: a seeded sample balanced by label (seed 0); ids in "
                                  f"{tmp_path / 'run' / 'rows_taken.json'}")
    assert json.loads((tmp_path / "run" / "rows_taken.json").read_text())["ids"] == ["b", "c"]


def test_rating_middle_labels_go_both_ways(tmp_path):
    f = tmp_path / "stars.jsonl"
    f.write_text('{"text": "good", "stars": 3}\n{"text": "awful", "stars": 1}\n')
    _, rows = go(f, tmp_path, task="rating")
    assert [(r["source_id"], r["stars"], r["original_stars"]) for r in rows] == [
        ("1", "1", "3"), ("1", "5", "3"), ("2", "5", "1")]


def test_nli_edits_only_the_chosen_side_once_per_other_relation(nli_tsv, tmp_path):
    _, rows = go(nli_tsv, tmp_path, task="nli", edit_side="hypothesis")
    assert len(rows) == 12  # 6 pairs x the 2 other relations
    first = [r for r in rows if r["source_id"] == "1"]
    assert [r["gold_label"] for r in first] == ["neutral", "contradiction"]
    for r in first:
        assert r["sentence1"] == r["original_sentence1"] == "A man in a red coat is walking a dog in the park."
        assert r["original_sentence2"] == "A man is outside with a dog." and r["original_gold_label"] == "entailment"
        assert r["sentence2"] == "A man is not outside with a dog."
    assert list(rows[0]) == ["sentence1", "sentence2", "gold_label", "source_id", "original_sentence1",
                             "original_sentence2", "original_gold_label", "method", "meta"]


def test_every_row_rejected_is_a_whole_file_error(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("text,label\ngood,maybe\nbad,\n")
    with pytest.raises(DataError, match=r"bad.csv: no usable rows; all 2 were rejected \(see .*rejects.jsonl\)"):
        go(f, tmp_path)
    assert len((tmp_path / "run" / "rejects.jsonl").read_text().splitlines()) == 2


def test_no_output_file_still_returns_rows(reviews, tmp_path):
    summary, rows = go(reviews, tmp_path, out=None)
    assert summary.output is None and [r["source_id"] for r in rows] == ["a", "b"]


def test_retry_failed_runs_only_the_failed_items_again(reviews, tmp_path, monkeypatch):
    summary, _ = go(reviews, tmp_path)
    assert summary.items_failed == 1
    WordSwap.calls = []
    summary, _ = go(reviews, tmp_path)  # a plain rerun keeps the failure and asks nothing again
    assert WordSwap.calls == [] and summary.items_failed == 1
    original = WordSwap.generate

    def healed(self, items, task):  # the cause of the failure went away (e.g. a flaky service)
        fixed = [type(it)(type(it.record)(it.record.id, {"text": it.record.text().replace("EXPLODE", "now")},
                                          it.record.label, it.record.meta), it.target) for it in items]
        return original(self, fixed, task)

    monkeypatch.setattr(WordSwap, "generate", healed)
    summary, rows = go(reviews, tmp_path, retry_failed=True)
    assert WordSwap.calls == [["c"]]
    assert summary.items_failed == 0 and summary.counterfactuals_written == 3
    assert [r["source_id"] for r in rows].count("c") == 1
    summary, _ = go(reviews, tmp_path, retry_failed=True)  # nothing failed any more: nothing to do
    assert WordSwap.calls == [["c"]] and summary.items_failed == 0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_method_says_why_an_item_has_no_counterfactual(reviews, tmp_path, workers):
    summary, _ = go(reviews, tmp_path, workers=workers)
    lines = {json.loads(x)["source_id"]: json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()}
    assert lines["e"]["status"] == "no_counterfactual" and lines["e"]["reason"] == "nothing to swap"
    assert "reason" not in lines["a"]
    assert lines["f"]["status"] == "no_counterfactual" and lines["f"]["reason"] == SAME_WORDS
    assert summary.without_reasons == {"nothing to swap": 1, SAME_WORDS: 1}
    assert any("nothing to swap" in line for line in summary.lines())


# ------------------------------------------------------------------------------- secrets on disk (2b)


@dataclass
class EndpointConfig:
    endpoint: str = ""  #: a URL that may carry user:password


class EndpointSwap(WordSwap):
    name = "endpoint-swap.v1"
    Config = EndpointConfig

    def identity_params(self):
        return {"endpoint": self.config.endpoint, "llm": {"base_url": [self.config.endpoint]}}


def test_the_command_line_and_urls_are_stored_without_secrets(reviews, tmp_path, monkeypatch):
    monkeypatch.setitem(METHODS._entries, EndpointSwap.name, Entry(EndpointSwap.name, "test method", EndpointSwap))
    monkeypatch.setattr("sys.argv", ["cfaug", "augment", str(reviews), "--llm-base-url",
                                     "http://alice:hunter2pass@llm.example:8000/v1", "--api-key", "sk-abcdefgh12345678ijkl",
                                     "--ray-address", "ray://bob:rayp4ss@head:10001"])
    go(reviews, tmp_path, method="endpoint-swap", params={"endpoint": "https://carol:s3cretpw@gw.example/v1"},
       ray_address="ray://bob:rayp4ss@head:10001")
    run_dir = tmp_path / "run"
    for f in run_dir.iterdir():
        text = f.read_text(encoding="utf-8")
        for secret in ("hunter2pass", "sk-abcdefgh12345678ijkl", "s3cretpw", "rayp4ss"):
            assert secret not in text, (f.name, secret)
    man = json.loads((run_dir / "manifest.json").read_text())
    assert "http://llm.example:8000/v1" in man["command"] and "[redacted]" in man["command"]
    assert man["options"]["ray_address"] == "ray://head:10001"
    cfg = json.loads((run_dir / "config.json").read_text())
    assert cfg["params"] == {"endpoint": "https://gw.example/v1", "llm": {"base_url": ["https://gw.example/v1"]}}
    go(reviews, tmp_path, method="endpoint-swap", params={"endpoint": "https://carol:s3cretpw@gw.example/v1"},
       out="again.jsonl")  # the stored (stripped) config still matches: resumed


# ---------------------------------------------------------------------------------- the output (6)


def test_an_output_under_a_regular_file_fails_before_any_work(reviews, tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    from cfaug.run.runner import OutputError

    with pytest.raises(OutputError, match=r"afile.*is a file, not a folder"):
        go(reviews, tmp_path, out="afile/sub/out.jsonl")
    assert WordSwap.calls == [] and not (tmp_path / "run").exists()


def test_an_unwritable_output_folder_fails_before_any_work(reviews, tmp_path, monkeypatch):
    from cfaug.run import runner as runner_module

    locked = tmp_path / "locked"
    locked.mkdir()
    real = runner_module._writable

    monkeypatch.setattr(runner_module, "_writable", lambda d: False if d == locked else real(d))
    with pytest.raises(runner_module.OutputError, match=r"cannot write to .*locked"):
        go(reviews, tmp_path, out="locked/new/out.jsonl")
    assert WordSwap.calls == [] and not (tmp_path / "run").exists()


def test_a_late_write_error_exits_2_and_keeps_the_results(reviews, tmp_path, monkeypatch, capsys):
    from cfaug.cli import main
    from cfaug.run import runner as runner_module

    def full_disk(rows, path, *a, **k):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(runner_module, "write_rows", full_disk)
    cmd = ["augment", str(reviews), "-o", str(tmp_path / "out.jsonl"), "--method", "word-swap", "--workers", "1",
           "--no-progress"]
    assert main(cmd) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "No space left on device" in err
    run_dir = tmp_path / "out.jsonl.run"
    assert str(run_dir) in err and "rerun" in err
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 5
    assert not (tmp_path / "out.jsonl").exists()
    monkeypatch.undo()
    registered_again = {cls.name: Entry(cls.name, "test method", cls) for cls in (WordSwap, AsyncWordSwap)}
    monkeypatch.setattr(METHODS, "_entries", {**METHODS._entries, **registered_again})
    WordSwap.calls = []
    assert main(cmd) == 4  # the output is written from the run directory, without redoing the work (c failed)
    assert WordSwap.calls == [] and len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


# ----------------------------------------------------------------------------------- resuming (12)


def test_a_relative_input_path_resumes_a_run_started_with_an_absolute_one(reviews, tmp_path, monkeypatch):
    go(reviews, tmp_path)
    WordSwap.calls = []
    monkeypatch.chdir(tmp_path)
    summary, _ = go("reviews.csv", tmp_path, out="again.jsonl")
    assert WordSwap.calls == [] and summary.items_resumed == 5


def test_a_changed_limit_resumes_and_only_adds_items(reviews, tmp_path):
    go(reviews, tmp_path, limit=2)  # b and c (see test_limit_takes_a_seeded_sample_balanced_by_label)
    WordSwap.calls = []
    summary, rows = go(reviews, tmp_path)
    assert summary.items_resumed == 2 and {i for call in WordSwap.calls for i in call} == {"a", "e", "f"}
    WordSwap.calls = []
    summary, rows = go(reviews, tmp_path, limit=1)
    assert WordSwap.calls == [] and summary.items == 1 and [r["source_id"] for r in rows] == ["b"]


def test_items_finished_by_another_cfaug_build_are_named_when_reused(reviews, tmp_path, monkeypatch):
    import cfaug.run.runner as runner

    go(reviews, tmp_path, limit=2)
    first = json.loads((tmp_path / "run" / "manifest.json").read_text())["versions"]
    assert first["cfaug_code"].startswith("sha256:") and len(first["cfaug_code"]) == len("sha256:") + 16
    same, _ = go(reviews, tmp_path, limit=2, out="same.jsonl")  # the same build: nothing to say
    assert same.resumed_from == [] and "earlier_versions" not in json.loads(
        (tmp_path / "run" / "manifest.json").read_text())

    monkeypatch.setattr(runner, "code_hash", lambda: "sha256:0123456789abcdef")
    said: list[str] = []
    summary, rows = run(reviews, RunOptions(method="word-swap", run_dir=str(tmp_path / "run"), progress=False,
                                            workers=1), output=tmp_path / "again.jsonl", log=said.append)
    assert summary.items_resumed == 2 and len(rows) == 2  # reused as they are, the other items made now
    made_by = f"cfaug {first['cfaug']} (code {first['cfaug_code']})"
    assert summary.resumed_from == [made_by]
    warning = [m for m in said if "another cfaug build" in m]
    assert len(warning) == 1 and made_by in warning[0] and "--overwrite" in warning[0]
    assert any(made_by in line for line in summary.lines())
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["versions"]["cfaug_code"] == "sha256:0123456789abcdef"
    assert man["earlier_versions"] == [first]

    said.clear()  # a later rerun by the new build still names the build that made the reused rows
    again, _ = run(reviews, RunOptions(method="word-swap", run_dir=str(tmp_path / "run"), progress=False,
                                       workers=1), output=tmp_path / "third.jsonl", log=said.append)
    assert again.resumed_from == [made_by] and any("another cfaug build" in m for m in said)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["earlier_versions"] == [first]


# ------------------------------------------------------------------------- timings, leftovers (18)


def test_manifest_timestamps_are_the_run_start_and_end_and_seconds_their_difference(reviews, tmp_path):
    from datetime import datetime

    summary, _ = go(reviews, tmp_path)
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    started, finished = datetime.fromisoformat(man["started"]), datetime.fromisoformat(man["finished"])
    assert started.tzinfo is not None and "." in man["started"]  # sub-second precision
    assert (finished - started).total_seconds() == pytest.approx(summary.seconds, abs=2e-3)
    assert man["summary"]["seconds"] == summary.seconds > 0


class PrepareFails(WordSwap):
    name = "prepare-fails.v1"

    def prepare(self, records, task, ctx):
        from cfaug.config import ConfigError

        raise ConfigError("the method's service is not configured")


def test_a_run_that_fails_before_doing_anything_leaves_no_run_directory(reviews, tmp_path, monkeypatch):
    from cfaug.config import ConfigError

    monkeypatch.setitem(METHODS._entries, PrepareFails.name, Entry(PrepareFails.name, "test method", PrepareFails))
    with pytest.raises(ConfigError, match="not configured"):
        run(reviews, RunOptions(method="prepare-fails", run_dir=str(tmp_path / "out" / "run"), progress=False),
            output=tmp_path / "out" / "o.jsonl", log=lambda m: None)
    assert not (tmp_path / "out").exists()  # neither the run directory nor the folder made for it
    with pytest.raises(DataError, match="no such file"):
        go(tmp_path / "missing.csv", tmp_path)
    with pytest.raises(ConfigError):
        go(reviews, tmp_path, params={"no_such_param": 1})
    assert not (tmp_path / "run").exists()
    # a run directory that already held results is never removed
    go(reviews, tmp_path)
    with pytest.raises(ConfigError):
        run(reviews, RunOptions(method="prepare-fails", run_dir=str(tmp_path / "run"), progress=False,
                                overwrite=True), log=lambda m: None)
    assert (tmp_path / "run").is_dir()
