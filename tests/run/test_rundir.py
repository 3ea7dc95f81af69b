import json

import pytest

from cfaug.run.rundir import RunDir, RunDirError

CONFIG = {"method": "auto-cad.v1", "params": {"min_similarity": 0.7, "folds": 5}, "seed": 0}


def line(key, **extra):
    return {"key": key, "status": "ok", "counterfactuals": [], **extra}


def test_open_writes_the_config_and_accepts_the_same_one_again(tmp_path):
    rd = RunDir(tmp_path / "run")
    rd.open(CONFIG)
    assert rd.read_json("config.json") == CONFIG
    with rd.appender() as out:
        out.append(line("a"))
    rd.open(json.loads(json.dumps(CONFIG)))
    assert list(rd.finished()) == ["a"]


def test_a_different_config_is_refused_with_what_differs(tmp_path):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    with rd.appender() as out:
        out.append(line("a"))
    changed = {**CONFIG, "params": {"min_similarity": 0.0, "folds": 5}, "seed": 1}
    with pytest.raises(RunDirError) as err:
        rd.open(changed)
    assert str(err.value) == (f"{tmp_path} holds a run with a different configuration (differs in: "
                              "params.min_similarity, seed); use another --run-dir or pass --overwrite to start it again")
    assert rd.read_json("config.json") == CONFIG and list(rd.finished()) == ["a"]


def test_a_parameter_added_since_the_run_agrees_when_it_holds_its_default(tmp_path):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    with rd.appender() as out:
        out.append(line("a"))
    newer = {**CONFIG, "params": {**CONFIG["params"], "rm_terms": "until-flip"}}
    defaults = {"min_similarity": 0.0, "folds": 5, "rm_terms": "until-flip"}
    rd.open(newer, param_defaults=defaults)  # the old run used what the new parameter's default does
    assert rd.read_json("config.json") == newer and list(rd.finished()) == ["a"]
    other = tmp_path / "other"
    rd2 = RunDir(other)
    rd2.open(CONFIG)
    with rd2.appender() as out:
        out.append(line("a"))
    with pytest.raises(RunDirError, match=r"differs in: params.rm_terms\)"):
        rd2.open({**CONFIG, "params": {**CONFIG["params"], "rm_terms": "top-per-sentence"}}, param_defaults=defaults)
    with pytest.raises(RunDirError, match=r"differs in: params.rm_terms\)"):  # no defaults known: refused
        rd2.open(newer)


def test_overwrite_starts_again(tmp_path):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    with rd.appender() as out:
        out.append(line("a"))
    rd.write_lines("rejects.jsonl", [{"row": 1}])
    rd.write_json("summary.json", {})
    changed = {**CONFIG, "seed": 2}
    rd.open(changed, overwrite=True)
    assert rd.read_json("config.json") == changed
    assert rd.finished() == {} and not (tmp_path / "rejects.jsonl").exists() and not (tmp_path / "summary.json").exists()


def test_a_run_that_finished_nothing_can_be_restarted_with_new_settings(tmp_path):
    rd = RunDir(tmp_path)
    rd.open({**CONFIG, "params": {"classifier": "bert-base-uncased"}})  # e.g. stopped on a bad model path
    rd.open(CONFIG)
    assert rd.read_json("config.json") == CONFIG


def test_finished_drops_a_half_written_last_line_and_keeps_the_first_of_duplicates(tmp_path):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    results = tmp_path / "results.jsonl"
    whole = json.dumps(line("a", n=1)) + "\n" + json.dumps(line("b")) + "\n" + json.dumps(line("a", n=2)) + "\n"
    results.write_text(whole + '{"key": "c", "stat', encoding="utf-8")
    done = rd.finished()
    assert list(done) == ["a", "b"] and done["a"]["n"] == 1
    assert results.read_text(encoding="utf-8") == whole  # the torn line is gone, so appends stay valid
    with rd.appender() as out:
        out.append(line("c"))
    assert list(rd.finished()) == ["a", "b", "c"]


def test_lines_and_json_files_are_replaced_whole(tmp_path):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    rd.write_lines("rejects.jsonl", [{"row": 1, "problem": "caf\u00e9"}, {"row": 2}])
    assert list(rd.read_lines("rejects.jsonl")) == [{"row": 1, "problem": "caf\u00e9"}, {"row": 2}]
    assert list(rd.read_lines("missing.jsonl")) == []
    assert not list(tmp_path.glob("*.tmp"))
