import errno
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys

from dataclasses import dataclass

import pytest

from cfaug.cli import main
from cfaug.data.records import Counterfactual
from cfaug.methods.base import METHODS, Method
from cfaug.registry import Entry
from cfaug.run import rundir as rundir_module
from cfaug.run.rundir import RunDir, RunDirError, RunDirLocked

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


# ------------------------------------------------------------------------------- identity on resume


def test_the_input_spelling_and_the_limit_are_not_part_of_the_identity(tmp_path):
    rd = RunDir(tmp_path)
    first = {**CONFIG, "input": "reviews.csv", "input_hash": "sha256:1", "limit": 2}
    rd.open(first)
    with rd.appender() as out:
        out.append(line("a"))
    again = {**CONFIG, "input": str(tmp_path / "reviews.csv"), "input_hash": "sha256:1", "limit": None}
    rd.open(again)  # the same content under another spelling, and a larger limit: resumed
    assert rd.read_json("config.json") == again and list(rd.finished()) == ["a"]
    with pytest.raises(RunDirError, match=r"differs in: input_hash\)"):
        rd.open({**again, "input_hash": "sha256:2"})
    # the training data and model are compared by content too, not by the path they were given as
    with_train = {**again, "train_data": {"path": "t.csv", "hash": "sha256:9"}}
    rd.open(with_train, overwrite=True)
    with rd.appender() as out:
        out.append(line("a"))
    rd.open({**with_train, "train_data": {"path": "/abs/t.csv", "hash": "sha256:9"}})
    with pytest.raises(RunDirError, match=r"differs in: train_data.hash\)"):
        rd.open({**with_train, "train_data": {"path": "t.csv", "hash": "sha256:8"}})


# ------------------------------------------------------------------------------------------- the lock



def _hold(path, ready, release):
    with RunDir(path).lock():
        ready.set()
        release.wait(30)


@pytest.fixture(params=["flock", "exclusive-file"])
def lock_mode(request, monkeypatch):
    """Both ways of locking: flock (Linux and other POSIX systems) and the O_EXCL lock file used elsewhere."""
    if request.param == "exclusive-file":
        monkeypatch.setattr(rundir_module, "fcntl", None)
    return request.param


def test_a_second_holder_is_refused_naming_the_first(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold, args=(str(tmp_path), ready, release))
    child.start()
    try:
        assert ready.wait(60)
        with pytest.raises(RunDirLocked) as err:
            with RunDir(tmp_path).lock():
                pass
        msg = str(err.value)
        assert f"pid {child.pid} on {socket.gethostname()}" in msg and str(tmp_path) in msg
        assert "another --run-dir" in msg
    finally:
        release.set()
        child.join(60)
    with RunDir(tmp_path).lock():  # released: free again
        assert (tmp_path / RunDir.LOCK).exists()
    assert not (tmp_path / RunDir.LOCK).exists()  # and nothing left behind


HOLD_SCRIPT = """
import sys, time
from cfaug.run import rundir
if sys.argv[2] == "exclusive-file":
    rundir.fcntl = None
with rundir.RunDir(sys.argv[1]).lock():
    print("locked", flush=True)
    time.sleep(60)
"""


def _holder(path, mode):
    proc = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, str(path), mode], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_live_holder_in_another_process_is_respected_and_a_killed_one_recovered(tmp_path, lock_mode):
    proc = _holder(tmp_path, lock_mode)
    try:
        with pytest.raises(RunDirLocked, match=rf"pid {proc.pid} on "):
            with RunDir(tmp_path).lock():
                pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert (tmp_path / RunDir.LOCK).exists()  # a SIGKILL leaves the lock file behind...
    with RunDir(tmp_path).lock():  # ...and the next run takes it over
        info = json.loads((tmp_path / RunDir.LOCK).read_text())
        assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
    assert not (tmp_path / RunDir.LOCK).exists()


def test_a_stale_lock_file_of_a_dead_process_is_recovered(tmp_path, lock_mode):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / RunDir.LOCK).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(),
                                                    "since": "2020-01-01T00:00:00"}))
    with RunDir(tmp_path).lock():
        assert json.loads((tmp_path / RunDir.LOCK).read_text())["pid"] == os.getpid()


def test_without_flock_a_lock_of_another_host_is_not_taken_over(tmp_path, monkeypatch):
    monkeypatch.setattr(rundir_module, "fcntl", None)
    (tmp_path / RunDir.LOCK).write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "since": "t"}))
    with pytest.raises(RunDirLocked, match=r"pid 1 on elsewhere.example.*delete .*lock"):
        with RunDir(tmp_path).lock():
            pass


# ------------------------------------------------------------------ files that cannot be read or written


@pytest.mark.parametrize("text,problem", [
    ("", "is empty"),
    ('{"method": "auto-cad.v1", "par', "is not valid JSON"),
    ("[1, 2]", "holds a list, not a JSON object"),
    ("\x00\x00\x00", "is not valid JSON"),
])
def test_an_unreadable_config_json_is_a_run_dir_error_naming_it(tmp_path, text, problem):
    rd = RunDir(tmp_path)
    (tmp_path / "config.json").write_text(text, encoding="utf-8")
    with pytest.raises(RunDirError) as err:
        rd.open(CONFIG)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'config.json'} {problem}") and "--overwrite" in message
    rd.open(CONFIG, overwrite=True)  # the way out the message names
    assert rd.read_json("config.json") == CONFIG


@pytest.mark.parametrize("text,problem", [("", "is empty"), ('{"versions": {', "is not valid JSON"),
                                          ('"done"', "holds a string, not a JSON object")])
def test_an_unreadable_json_file_is_a_run_dir_error_naming_it(tmp_path, text, problem):
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    with pytest.raises(RunDirError, match=rf"^{tmp_path / 'manifest.json'} {problem}"):
        RunDir(tmp_path).read_json("manifest.json")


@pytest.mark.parametrize("bad,problem", [
    ("not json at all", "is not valid JSON"),
    ('{"source_id": "x", "status": "ok", "counterfactuals": []}', "has no key"),
    ('{"key": "x", "status": "done", "counterfactuals": []}', "status 'done'"),
    ('{"key": "x", "status": "ok", "counterfactuals": "none"}', "counterfactuals"),
    ('{"key": 7, "status": "ok", "counterfactuals": []}', "has no key"),
    ("[1, 2]", "not a JSON object"),
    ('"a"', "not a JSON object"),
])
def test_a_results_line_that_is_not_a_result_is_a_run_dir_error_naming_file_and_line(tmp_path, bad, problem):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(line("a")) + "\n" + bad + "\n" + json.dumps(line("b")) + "\n", encoding="utf-8")
    with pytest.raises(RunDirError) as err:
        rd.finished()
    message = str(err.value)
    assert message.startswith(f"{results} line 2 ") and problem in message and "--overwrite" in message


def test_a_full_disk_while_writing_a_json_file_is_a_run_dir_error_naming_it(tmp_path, monkeypatch):
    rd = RunDir(tmp_path)
    rd.open(CONFIG)

    def full(src, dst, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(RunDirError, match=rf"^cannot write {tmp_path / 'manifest.json'}: No space left on device") \
            as err:
        rd.write_json("manifest.json", {"versions": {}})
    assert isinstance(err.value, OSError) and err.value.errno == errno.ENOSPC  # still an OSError to its callers
    assert rd.read_json("config.json") == CONFIG and not list(tmp_path.glob("*.tmp"))


# the same through the command: exit 2, one line naming the file and the problem, no traceback

@dataclass
class NoParams:
    pass


class Suffix(Method):
    """Appends " (flipped)"."""

    name = "rundir-suffix.v1"
    Config = NoParams
    supported_tasks = ("sentiment",)

    def generate(self, items, task):
        return [[Counterfactual(it.record, {"text": it.record.text() + " (flipped)"}, it.target, self.name, {})]
                for it in items]


@pytest.fixture
def command(tmp_path, monkeypatch):
    monkeypatch.setitem(METHODS._entries, Suffix.name, Entry(Suffix.name, "test method", Suffix))
    data = tmp_path / "in.csv"
    data.write_text("id,text,label\na,a fine film,pos\nb,a dull plot,neg\n", encoding="utf-8")
    return ["augment", str(data), "-o", str(tmp_path / "o.jsonl"), "--method", "rundir-suffix", "--workers", "1",
            "--no-progress"]


def cli(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name,text,problem", [
    ("config.json", "", "is empty"),
    ("config.json", "{\"method\": ", "is not valid JSON"),
    ("manifest.json", "", "is empty"),
    ("manifest.json", "[]", "holds a list, not a JSON object"),
    ("results.jsonl", '{"key": "x"}\n', "line 1 "),
])
def test_a_damaged_file_of_the_run_directory_exits_2_naming_it(tmp_path, capsys, command, name, text, problem):
    assert cli(command, capsys)[0] == 0
    (tmp_path / "o.jsonl.run" / name).write_text(text, encoding="utf-8")
    code, err = cli(command, capsys)
    assert code == 2 and "Traceback" not in err, err
    assert err.startswith(f"cfaug: error: {tmp_path / 'o.jsonl.run' / name} {problem}")


@pytest.mark.parametrize("name", ["config.json", "manifest.json"])
def test_a_full_disk_while_writing_the_run_directory_exits_2_naming_the_file(tmp_path, capsys, monkeypatch,
                                                                              command, name):
    real = os.replace

    def full(src, dst, *a, **k):
        if os.path.basename(dst) == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)
    code, err = cli(command, capsys)
    assert code == 2 and "Traceback" not in err, err
    assert f"cannot write {tmp_path / 'o.jsonl.run' / name}: No space left on device" in err
    assert not (tmp_path / "o.jsonl").exists()
    monkeypatch.setattr(os, "replace", real)
    assert cli(command, capsys)[0] == 0  # once there is room, the same command runs
