"""Output safety in every command that writes files (see :mod:`cfaug.run.outputs`): an output that is one
of the command's inputs, however it is spelled, or lies inside a run directory the command reads, is
refused with exit code 2 before any work, and the input is left byte for byte as it was; a second
command writing the same output while the first holds it is refused like a busy run directory. An output is a
regular file, a new path or ``-`` (standard output): a FIFO, a device or a link to one is refused and left as it
was; nothing is written inside an input folder, another run's directory or a cache."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.run.decisions import STORE_FILE, ReviewStore
from cfaug.run.outputs import output_lock

#: the ways an output can name the same file as an input called NAME in the current folder
SPELLINGS = ("plain", "dot", "parent", "symlink", "hardlink")


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def spell(name: str, how: str) -> str:
    """``name`` (a file in the current folder, or below it) spelled ``how``; links are made here."""
    if how == "plain":
        return name
    if how == "dot":
        return f"./{name}"
    if how == "parent":
        Path("sub").mkdir(exist_ok=True)
        return f"sub/../{name}"
    alias = f"{how}-{Path(name).name}"
    if how == "symlink":
        os.symlink(name, alias)
    else:
        os.link(name, alias)
    return alias


def write_tsv(path, rows, header=("text", "label")):
    Path(path).write_text("\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def counterfactuals(path):
    rows = [("the film was good .", "the film was bad .", "Positive", "Negative"),
            ("the plot was boring .", "the plot was fun .", "Negative", "Positive")]
    Path(path).write_text("".join(json.dumps({"Text": n, "Sentiment": t, "source_id": str(i), "original_Text": o,
                                              "original_Sentiment": s, "method": "auto-cad.v1",
                                              "meta": {"passed": True}}) + "\n"
                                  for i, (o, n, s, t) in enumerate(rows)), encoding="utf-8")
    return str(path)


def run_dir(path):
    """A small run directory as 'cfaug augment' writes it (config and results), its one counterfactual
    accepted in the review store."""
    path = Path(path)
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"method": "auto-cad.v1", "task": {"name": "sentiment"},
                                                  "schema": {"text_cols": {"text": "text"}, "label_col": "label"}}))
    row = {"text": "a bad film", "label": "negative", "source_id": "1", "original_text": "a good film",
           "original_label": "positive", "method": "auto-cad.v1", "meta": {"passed": True}}
    (path / "results.jsonl").write_text(json.dumps({"key": "1", "status": "ok", "counterfactuals": [row]}) + "\n")
    decided(path)
    return str(path)


def decided(path):
    """A review store in the folder ``path`` with one decision (what people did by hand: never to be lost)."""
    Path(path).mkdir(exist_ok=True)
    with ReviewStore(Path(path)) as store:
        store.record("1#0", "ann", "accepted")
    return Path(path) / STORE_FILE


@pytest.fixture
def here(tmp_path, monkeypatch, sentiment_tsv):
    """A scratch folder as the current folder, holding data.tsv (the sentiment fixture)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.tsv").write_bytes(sentiment_tsv.read_bytes())
    return tmp_path


def _downstream(out):
    dev = write_tsv("dev.tsv", [("a good film", "positive"), ("a bad film", "negative")])
    test = write_tsv("test.tsv", [("good fun", "positive"), ("bad and dull", "negative")])
    return ["downstream", "--train", "data.tsv", "--dev", dev, "--in-domain", f"t={test}", "-p", "c_grid=1",
            "--seeds", "0", "-o", out]


#: command -> (the input's flag as the message names it, argv writing the output OUT over the input data.tsv)
FILE_INPUTS = {
    "augment": ("", lambda out: ["augment", "data.tsv", "-o", out, "--no-progress"]),
    "augment --train-data": ("--train-data", lambda out: ["augment", write_tsv("in.tsv", [("a good film", "Positive")]),
                                                           "--train-data", "data.tsv", "-o", out, "--no-progress"]),
    "augment -p": ("-p classifier_data", lambda out: ["augment", write_tsv("in.tsv", [("a good film", "Positive")]),
                                                      "-p", "classifier_data=data.tsv", "-o", out, "--no-progress"]),
    "train": ("--train-data", lambda out: ["train", "auto-cad", "--train-data", "data.tsv", "-o", out, "--no-progress"]),
    "evaluate": ("", lambda out: ["evaluate", counterfactuals("data.tsv"), "--format", "jsonl", "-o", out,
                                  "--no-embedding", "--no-bertscore", "--ngram-reference", "none", "--no-progress"]),
    "evaluate --judge-train": ("--judge-train", lambda out: [
        "evaluate", counterfactuals("cf.jsonl"), "--judge-train", "data.tsv", "-o", out, "--no-embedding",
        "--no-bertscore", "--ngram-reference", "none", "--no-progress"]),
    "downstream": ("--train", _downstream),
    "compare": ("", lambda out: ["compare", "data.tsv", "--methods", "auto-cad", "-o", out, "--no-progress"]),
    "prompt-search": ("", lambda out: ["prompt-search", "data.tsv", "--judge-train", "data.tsv", "-o", out]),
}


@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("command", list(FILE_INPUTS))
def test_an_output_that_is_an_input_is_refused(here, command, how):
    flag, argv = FILE_INPUTS[command]
    out = spell("data.tsv", how)
    args = argv(out)
    before = sha("data.tsv")
    code, _, err = cli(*args)
    assert code == 2, err
    assert f"-o {out} is the same file as the input {flag + ' ' if flag else ''}data.tsv" in err, err
    assert "Traceback" not in err
    assert sha("data.tsv") == before
    assert not list(here.glob("*.run")) and not list(here.glob(".*.lock"))  # nothing was started


#: commands reading the run directory RUN -> argv writing the output OUT
RUN_READERS = {
    "report": lambda out: ["report", "run", "-o", out],
    "evaluate": lambda out: ["evaluate", "run", "-o", out, "--no-embedding", "--no-bertscore", "--ngram-reference",
                             "none", "--no-progress"],
    "review export": lambda out: ["review", "export", "run", "-o", out, "--format", "jsonl"],
    "review export label-studio": lambda out: ["review", "export", "run", "-o", out, "--format", "label-studio"],
}


@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("command", list(RUN_READERS))
def test_an_output_inside_a_run_directory_the_command_reads_is_refused(here, command, how):
    run_dir("run")
    before = {p.name: sha(p) for p in Path("run").iterdir()}
    out = spell("run/results.jsonl", how)
    code, _, err = cli(*RUN_READERS[command](out))
    assert code == 2, err
    said = "is a hard link of run/results.jsonl, inside" if how == "hardlink" else "is inside"
    assert f"-o {out} {said} the run directory run, which this command reads" in err, err
    assert {p.name: sha(p) for p in Path("run").iterdir()} == before


def test_report_and_evaluate_write_only_their_own_file_into_the_run_directory(here):
    run_dir("run")
    code, _, err = cli("report", "run", "-o", "run/summary.html")
    assert code == 2 and "-o run/summary.html is inside the run directory run" in err, err
    assert cli("report", "run", "-o", "run/report.html")[0] == 0
    code, _, err = cli(*RUN_READERS["evaluate"]("run/metrics.json"))
    assert code == 0, err
    assert json.loads(Path("run/metrics.json").read_text())["pairs_scored"] == 1


def test_augment_never_writes_over_a_file_of_its_run_directory(here):
    store = decided("r")
    before = sha(store)
    code, _, err = cli("augment", "data.tsv", "-o", store, "--output-format", "jsonl", "--run-dir", "r",
                       "--no-progress")
    assert code == 2 and f"-o {store} is the same file as the input --run-dir r/{STORE_FILE}" in err, err
    assert sha(store) == before
    code, _, err = cli("augment", "data.tsv", "-o", "r", "--output-format", "hf", "--run-dir", "r", "--no-progress")
    assert code == 2 and "-o r is the same file as the input --run-dir r" in err, err
    assert sorted(p.name for p in Path("r").iterdir()) == [STORE_FILE]


def test_augment_refuses_its_config_file_as_output(here):
    Path("cfg.json").write_text('{"text_col": "Text", "label_col": "Sentiment", "output_format": "jsonl"}\n',
                                encoding="utf-8")
    before = sha("cfg.json")
    code, _, err = cli("augment", "data.tsv", "--config", "cfg.json", "-o", "./cfg.json", "--no-progress")
    assert code == 2 and "-o ./cfg.json is the same file as the input --config cfg.json" in err, err
    assert sha("cfg.json") == before


def test_train_never_replaces_a_folder_that_holds_its_data_or_other_files(here):
    Path("models").mkdir()
    Path("models/train.tsv").write_bytes(Path("data.tsv").read_bytes())
    before = sha("models/train.tsv")
    code, _, err = cli("train", "auto-cad", "--train-data", "models/train.tsv", "-o", "models", "--no-progress")
    assert code == 2 and "-o models: the input --train-data models/train.tsv is inside that folder" in err, err
    assert sha("models/train.tsv") == before
    Path("notes").mkdir()
    Path("notes/todo.txt").write_text("mine\n")
    code, _, err = cli("train", "auto-cad", "--train-data", "data.tsv", "-o", "notes", "--no-progress")
    assert code == 2 and "-o notes is a folder of other files, not a model folder" in err, err
    assert Path("notes/todo.txt").read_text() == "mine\n"


def test_compare_refuses_inputs_among_the_files_it_writes(here):
    Path("cmp/runs/auto-cad").mkdir(parents=True)
    Path("cmp/sample.jsonl").write_bytes(Path("data.tsv").read_bytes())
    before = sha("cmp/sample.jsonl")
    code, _, err = cli("compare", "cmp/sample.jsonl", "--format", "tsv", "--methods", "auto-cad", "--limit", "4",
                       "-o", "cmp", "--no-progress")
    assert code == 2 and "-o cmp/sample.jsonl is the same file as the input cmp/sample.jsonl" in err, err
    assert sha("cmp/sample.jsonl") == before
    test = write_tsv("cmp/runs/auto-cad/test.tsv", [("good", "Positive"), ("bad", "Negative")], ("Text", "Sentiment"))
    code, _, err = cli("compare", "data.tsv", "--methods", "auto-cad", "--test", test, "-o", "cmp", "--no-progress")
    assert code == 2 and f"-o cmp/runs: the input --test {test} is inside that folder" in err, err


def test_downstream_markdown_is_neither_an_input_nor_the_results_file(here):
    argv = _downstream("ds.json")
    before = sha("dev.tsv")
    code, _, err = cli(*argv, "--markdown", "dev.tsv")
    assert code == 2 and "--markdown dev.tsv is the same file as the input --dev dev.tsv" in err, err
    assert sha("dev.tsv") == before
    code, _, err = cli(*argv, "--markdown", "./ds.json")
    assert code == 2 and "--markdown ./ds.json is the same file as -o ds.json" in err, err
    assert not Path("ds.json").exists()


def test_prompt_search_refuses_an_input_among_its_files(here):
    Path("out").mkdir()
    write_tsv("out/demos.tsv", [("r01", "a better film")], ("id", "counterfactual"))
    before = sha("out/demos.tsv")
    code, _, err = cli("prompt-search", "data.tsv", "--judge-train", "data.tsv", "--annotations", "out/demos.tsv",
                       "-o", "out")
    assert code == 2 and "-o out/demos.tsv is the same file as the input --annotations out/demos.tsv" in err, err
    assert sha("out/demos.tsv") == before
    run_dir("marks")
    code, _, err = cli("prompt-search", "data.tsv", "--marks", "marks", "--annotations", "ann.tsv", "-o", "marks/ps")
    assert code == 2 and "-o marks/ps is inside the run directory --marks marks" in err, err


def test_review_export_refuses_a_dataset_folder_that_holds_the_run(here):
    Path("export").mkdir()
    run_dir("export/run")
    code, _, err = cli("review", "export", "export/run", "-o", "export", "--format", "hf")
    assert code == 2 and "-o export holds the run directory export/run, which this command reads" in err, err
    assert sorted(p.name for p in Path("export/run").iterdir()) == ["config.json", "results.jsonl", STORE_FILE]


# ------------------------------------------------------------------------------ one writer per output


#: command -> argv writing the output OUT (valid up to the point where the output is locked)
WRITERS = {
    "augment": lambda out: ["augment", "data.tsv", "-o", out, "--run-dir", "other.run", "--no-progress"],
    "train": lambda out: ["train", "auto-cad", "--train-data", "data.tsv", "-o", out, "--no-progress"],
    "evaluate": lambda out: ["evaluate", counterfactuals("cf.jsonl"), "-o", out, "--no-embedding", "--no-bertscore",
                             "--ngram-reference", "none", "--no-progress"],
    "downstream": _downstream,
    "compare": lambda out: ["compare", "data.tsv", "--methods", "auto-cad", "-o", out, "--no-progress"],
    "report": lambda out: ["report", run_dir("run"), "-o", out],
    "review export": lambda out: ["review", "export", run_dir("run"), "-o", out],
    "prompt-search": lambda out: ["prompt-search", "data.tsv", "--judge-train", "data.tsv", "-o", out],
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_second_writer_of_the_same_output_is_refused(here, command):
    out = "result.jsonl" if command in ("augment", "review export") else "result"
    with output_lock(out):
        code, _, err = cli(*WRITERS[command](out))
        assert Path(".result.jsonl.lock" if out.endswith(".jsonl") else ".result.lock").exists()
    assert code == 2, err
    assert f"{out} is being written by another cfaug run (pid {os.getpid()} on " in err, err
    assert "Traceback" not in err
    assert not Path(out).exists()
    assert not list(here.glob(".*.lock"))
    assert not Path("other.run").exists()  # a run refused before any work leaves no run directory


# ------------------------------------------------------------------------------ what an output may be


def special(kind: str) -> tuple[str, Callable[[], bool]]:
    """An output path of ``kind`` made in the current folder, and a check that it is still what it was."""
    if kind == "fifo":
        os.mkfifo("pipe.jsonl")
        return "pipe.jsonl", lambda: stat.S_ISFIFO(os.lstat("pipe.jsonl").st_mode)
    if kind == "link to fifo":
        os.mkfifo("pipe")
        os.symlink("pipe", "pipe.jsonl")
        return "pipe.jsonl", lambda: os.path.islink("pipe.jsonl") and stat.S_ISFIFO(os.stat("pipe").st_mode)
    # never the device itself: a failing test must not replace /dev/null
    os.symlink(os.devnull, "null.jsonl")
    return "null.jsonl", lambda: os.path.islink("null.jsonl") and stat.S_ISCHR(os.stat(os.devnull).st_mode)


SPECIAL_KINDS = {"fifo": "is a FIFO (named pipe)", "link to fifo": "(a symbolic link to pipe) is a FIFO (named pipe)",
                 "link to device": f"(a symbolic link to {os.devnull}) is a character device"}

#: commands writing one file -> argv writing the output OUT
FILE_WRITERS = {
    "augment": lambda out: ["augment", "data.tsv", "-o", out, "--no-progress"],
    "evaluate": lambda out: ["evaluate", counterfactuals("cf.jsonl"), "-o", out, "--no-embedding", "--no-bertscore",
                             "--ngram-reference", "none", "--no-progress"],
    "report": lambda out: ["report", run_dir("run"), "-o", out],
    "review export": lambda out: ["review", "export", run_dir("run"), "-o", out],
    "review export label-studio": lambda out: ["review", "export", run_dir("run"), "-o", out,
                                               "--format", "label-studio"],
    "downstream": _downstream,
}


@pytest.mark.parametrize("kind", list(SPECIAL_KINDS))
@pytest.mark.parametrize("command", list(FILE_WRITERS))
def test_an_output_that_is_no_regular_file_is_refused_and_left_as_it_was(here, command, kind):
    out, unchanged = special(kind)
    code, _, err = cli(*FILE_WRITERS[command](out))
    assert code == 2, err
    assert f"-o {out} {SPECIAL_KINDS[kind]}" in err and "not a regular file" in err, err
    assert "Traceback" not in err
    assert unchanged()
    assert not list(here.glob("*.run")) or command in ("report", "review export", "review export label-studio")


def test_an_existing_folder_is_no_output_file(here):
    Path("out.jsonl").mkdir()
    code, _, err = cli("augment", "data.tsv", "-o", "out.jsonl", "--output-format", "jsonl", "--no-progress")
    assert code == 2 and "-o out.jsonl is a folder, not a regular file" in err, err
    code, _, err = cli(*FILE_WRITERS["report"]("out.jsonl"))
    assert code == 2 and "-o out.jsonl is a folder, not a regular file" in err, err


#: the runs below check where their output goes, not what C learns: C reads the 40 rows of data.tsv alone (no
#: shipped background sample of 20,000 texts), which trains in a moment
SMALL_C = ("-p", "classifier_background=none")


def test_a_symbolic_link_to_a_regular_file_is_written_through(here):
    Path("real.jsonl").write_text("old\n", encoding="utf-8")
    os.symlink("real.jsonl", "link.jsonl")
    code, _, err = cli("augment", "data.tsv", "-o", "link.jsonl", "--limit", "4", "--no-progress", *SMALL_C)
    assert code == 0, err
    assert os.path.islink("link.jsonl") and os.readlink("link.jsonl") == "real.jsonl"
    rows = [json.loads(line) for line in Path("real.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["Sentiment"] in ("Positive", "Negative") for r in rows)
    assert not list(here.glob(".*.tmp"))


def test_dash_is_standard_output(here):
    code, out, err = cli("augment", "data.tsv", "-o", "-", "--limit", "4", "--no-progress", *SMALL_C)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]  # nothing but rows on stdout
    assert rows and all(set(r) >= {"Text", "Sentiment", "original_Text", "meta"} for r in rows)
    assert "output                 - (standard output)" in err and '"output": "-"' in err
    assert not Path("-").exists()
    assert Path("data.counterfactuals.jsonl.run/results.jsonl").exists()  # named after the default output
    code, out, err = cli("augment", "data.tsv", "-o", "-", "--limit", "4", "--output-format", "tsv", "--no-progress",
                         *SMALL_C)
    assert code == 0 and out.splitlines()[0].split("\t")[:2] == ["Text", "Sentiment"], err
    code, out, err = cli("augment", "data.tsv", "-o", "-", "--output-format", "parquet", "--no-progress", *SMALL_C)
    assert code == 2 and "- (standard output) takes jsonl, csv, tsv, not parquet" in err, err
    code, out, err = cli("augment", "data.tsv", "-o", "./-", "--limit", "4", "--output-format", "jsonl",
                         "--no-progress", *SMALL_C)
    assert code == 0 and Path("-").read_text(encoding="utf-8").count("\n") == len(rows), err

    run_dir("run")
    code, out, err = cli("review", "export", "run", "-o", "-")
    assert code == 0 and [json.loads(line)["text"] for line in out.splitlines()] == ["a bad film"], err
    code, out, err = cli("report", "run", "-o", "-")
    assert code == 0 and out.lstrip().lower().startswith("<!doctype html>") and out.rstrip().endswith("</html>"), err
    assert not Path("run/report.html").exists()


@pytest.mark.parametrize("command", ["train", "compare", "evaluate", "downstream", "prompt-search"])
def test_dash_is_refused_where_a_command_writes_no_stream(here, command):
    argv = (FILE_WRITERS.get(command) or WRITERS[command])("-")
    code, out, err = cli(*argv)
    assert code == 2 and "-o -: this command writes" in err and "not to standard output" in err, err
    assert not Path("-").exists() and out == ""


def hf_folder(path):
    import datasets

    rows = [{"Text": "a wonderful film", "Sentiment": "Positive"}, {"Text": "a dull film", "Sentiment": "Negative"}]
    datasets.Dataset.from_list(rows).save_to_disk(str(path))
    return Path(path)


@pytest.mark.parametrize("name", ["dataset_info.json", "data-00000-of-00001.arrow", "new.jsonl", "sub/new.jsonl"])
def test_an_output_inside_an_input_folder_is_refused(here, name):
    folder = hf_folder("hfin")
    before = {p.name: sha(p) for p in folder.iterdir()}
    code, _, err = cli("augment", "hfin", "-o", f"hfin/{name}", "--output-format", "jsonl", "--no-progress")
    assert code == 2 and f"-o hfin/{name} is inside the input folder hfin" in err, err
    assert {p.name: sha(p) for p in folder.iterdir()} == before


@pytest.mark.parametrize("name", ["manifest.json", "config.json", "results.jsonl", "new.jsonl"])
@pytest.mark.parametrize("command", ["augment", "evaluate", "review export", "report"])
def test_an_output_inside_another_run_directory_is_refused(here, command, name):
    other = Path(run_dir("other.jsonl.run"))
    (other / "manifest.json").write_text(json.dumps({"method": "auto-cad.v1", "versions": {}}))
    before = {p.name: sha(p) for p in other.iterdir()}
    out = f"other.jsonl.run/{name}"
    argv = {"review export": lambda o: ["review", "export", run_dir("run"), "-o", o, "--format", "jsonl"]}.get(
        command, FILE_WRITERS[command])(out)
    code, _, err = cli(*argv)
    assert code == 2, err
    assert f"-o {out} is " in err and "other.jsonl.run" in err and ("another cfaug run" in err or
                                                                   "same file as the input" in err), err
    assert {p.name: sha(p) for p in other.iterdir()} == before


def test_a_run_may_write_its_output_inside_its_own_run_directory(here):
    code, _, err = cli("augment", "data.tsv", "-o", "r/cf.jsonl", "--run-dir", "r", "--limit", "2", "--no-progress",
                       *SMALL_C)
    assert code == 0, err
    code, _, err = cli("augment", "data.tsv", "-o", "r/cf.jsonl", "--run-dir", "r", "--limit", "2", "--no-progress",
                       *SMALL_C)
    assert code == 0 and "2 already done" in err, err


@pytest.mark.parametrize("name", ["requests.sqlite", "requests.sqlite-wal", "requests.sqlite-shm", "x.jsonl"])
def test_an_output_inside_a_cache_is_refused(here, monkeypatch, name):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(here / "cache"))
    Path("cache").mkdir()
    Path("cache/requests.sqlite").write_bytes(b"answers")
    code, _, err = cli("augment", "data.tsv", "-o", f"cache/{name}", "--no-progress")
    assert code == 2 and f"-o cache/{name} is inside the request cache" in err, err
    code, _, err = cli("augment", "data.tsv", "--method", "zero-shot", "--llm-base-url", "http://127.0.0.1:9/v1",
                       "--llm-model", "m", "--cache-dir", "mycache", "-o", f"mycache/{name}", "--output-format", "jsonl",
                       "--no-progress")
    assert code == 2 and f"-o mycache/{name} is inside the cache folder of -p llm.cache_dir" in err, err
    store = Path(os.environ["CFAUG_MODEL_STORE"])
    code, _, err = cli("augment", "data.tsv", "-o", str(store / "x.jsonl"), "--no-progress")
    assert code == 2 and "is inside the model store" in err, err
    assert Path("cache/requests.sqlite").read_bytes() == b"answers"
    assert not (store / "x.jsonl").exists() and not list(here.glob("*.run"))
