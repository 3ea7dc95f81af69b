"""The output safety checks and the output lock (:mod:`cfaug.run.outputs`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import cfaug.run.rundir as rundir
from cfaug.run.outputs import (
    OutputLocked,
    OutputRefused,
    check_output,
    is_within,
    lock_file,
    output_lock,
    param_inputs,
    run_dir_inputs,
    same_file,
)
from cfaug.run.rundir import RunDirLocked


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.tsv").write_text("text\tlabel\na\tb\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    os.symlink("data.tsv", tmp_path / "link.tsv")
    os.link(tmp_path / "data.tsv", tmp_path / "hard.tsv")
    return tmp_path


@pytest.mark.parametrize("spelling", ["data.tsv", "./data.tsv", "sub/../data.tsv", "link.tsv", "hard.tsv"])
def test_same_file_sees_through_every_spelling(here, spelling):
    assert same_file(spelling, "data.tsv") and same_file(here / "data.tsv", spelling)
    with pytest.raises(OutputRefused, match=rf"^-o {spelling} is the same file as the input --train data.tsv; "):
        check_output(spelling, "-o", inputs=[("--dev", "other.tsv"), ("--train", "data.tsv")])


def test_paths_that_do_not_exist_are_compared_resolved(here):
    assert same_file("new.tsv", "sub/../new.tsv") and same_file("sub/x", "./sub/x")
    assert not same_file("new.tsv", "data.tsv") and not same_file("new.tsv", "sub/new.tsv")
    check_output("out.jsonl", inputs=[("", "data.tsv"), ("--rows", [{"text": "in memory"}]), ("--dev", None)])
    check_output(None, inputs=[("", "data.tsv")])  # no output: nothing to check


def test_a_folder_written_as_a_whole_must_not_hold_an_input(here):
    (here / "models").mkdir()
    (here / "models" / "train.tsv").write_text("x\n")
    check_output("models", inputs=[("--train-data", "models/train.tsv")])  # a folder the command writes into
    with pytest.raises(OutputRefused, match="the input --train-data models/train.tsv is inside that folder"):
        check_output("models", inputs=[("--train-data", "models/train.tsv")], folder=True)
    assert is_within("models/train.tsv", "sub/../models") and not is_within("models", "models/train.tsv")


def test_an_output_inside_a_run_directory_it_reads(here):
    run = here / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("{}\n")
    os.link(run / "results.jsonl", here / "copy.jsonl")
    for out in ("run/results.jsonl", "run/new/report.html", "run", "./run/../run/config.json"):
        with pytest.raises(OutputRefused, match=rf"^-o {out} is inside the run directory run, which this command reads"):
            check_output(out, read_dirs=[("", "run")], own_files=("report.html",))
    check_output("run/report.html", read_dirs=[("", "run")], own_files=("report.html",))
    check_output("report.html", read_dirs=[("", "run")])
    with pytest.raises(OutputRefused, match=r"^-o copy.jsonl is a hard link of run/results.jsonl, inside the run"):
        check_output("copy.jsonl", read_dirs=[("", "run")])
    with pytest.raises(OutputRefused, match=r"^-o \. holds the run directory RUN run, which this command reads"):
        check_output(".", read_dirs=[("RUN", "run")], folder=True)


def test_a_run_may_keep_its_output_in_its_run_directory_but_not_on_its_files(here):
    inputs = run_dir_inputs("r")
    check_output("r/counterfactuals.jsonl", inputs=inputs)
    for name in ("results.jsonl", "config.json", "review.sqlite", "lock"):
        with pytest.raises(OutputRefused, match=f"the input --run-dir r/{name}"):
            check_output(f"r/{name}", inputs=inputs)
    with pytest.raises(OutputRefused, match="the input --run-dir r;"):
        check_output("./r", inputs=inputs)
    assert run_dir_inputs(None) == []


def test_param_inputs_are_the_parameters_naming_existing_files(here):
    params = {"demos": "data.tsv", "n_demos": 3, "prompt": "lass-pairs.v1", "llm": {"price_table": "hard.tsv",
                                                                                     "base_url": ["http://x"]},
              "lists": ["sub", "missing.tsv"]}
    assert param_inputs(params) == [("-p demos", "data.tsv"), ("-p llm.price_table", "hard.tsv"), ("-p lists", "sub")]
    assert param_inputs(None) == []


# ---------------------------------------------------------------------------------------------- the lock

HOLDER = textwrap.dedent("""
    import sys
    from cfaug.run.outputs import output_lock
    with output_lock(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.readline()
""")


def test_a_second_process_writing_the_same_output_is_refused_until_the_first_is_gone(here):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, "out.jsonl"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputLocked) as err:
            with output_lock("sub/../out.jsonl"):
                pass
        assert isinstance(err.value, RunDirLocked)  # the command line gives it the exit code of a busy run dir
        assert str(err.value).startswith(f"sub/../out.jsonl is being written by another cfaug run (pid {holder.pid} "
                                         f"on {socket.gethostname()}, since ")
        assert "wait for it to finish or choose another output" in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    with output_lock("out.jsonl"):  # the kernel released the dead holder's lock
        assert json.loads((here / ".out.jsonl.lock").read_text())["pid"] == os.getpid()
    assert not (here / ".out.jsonl.lock").exists()


@pytest.mark.parametrize("mode", ["flock", "exclusive-file"])
def test_a_lock_left_by_a_dead_process_is_taken_over(here, monkeypatch, mode):
    if mode == "exclusive-file":
        monkeypatch.setattr(rundir, "fcntl", None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = here / ".out.jsonl.lock"
    lock.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "since": "earlier"}))
    with output_lock("out.jsonl"):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()


def test_a_live_lock_of_another_host_names_the_file_to_delete(here, monkeypatch):
    monkeypatch.setattr(rundir, "fcntl", None)
    (here / ".out.jsonl.lock").write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "since": "then"}))
    with pytest.raises(OutputLocked, match=r"pid 1 on elsewhere.example.*if that run is gone, delete .*\.out\.jsonl\.lock"):
        with output_lock("out.jsonl"):
            pass


def test_one_lock_per_file_and_the_folders_made_for_it_go_afterwards(here):
    with output_lock("a.jsonl", "./a.jsonl", None, "link.tsv", "new/deeper/b.json"):
        assert lock_file("link.tsv") == here / ".data.tsv.lock"  # a symbolic link locks the file it points to
        assert sorted(p.name for p in here.glob(".*.lock")) == [".a.jsonl.lock", ".data.tsv.lock"]
        assert (here / "new" / "deeper" / ".b.json.lock").exists()
    assert not list(here.glob(".*.lock")) and not (here / "new").exists()
    with output_lock("kept/c.json"):
        (here / "kept" / "c.json").write_text("{}")
    assert (here / "kept" / "c.json").exists() and not (here / "kept" / ".c.json.lock").exists()
