"""Atomic writes (:mod:`cfaug.data.io.atomic`): a write that fails midway leaves the old file as it was and
no temporary file; a replaced file keeps its permission bits; a symbolic link is written through; only a
regular file is ever replaced; ``-`` is standard output."""

from __future__ import annotations

import os
import stat

import pytest

from cfaug.data.io import DataError, write_rows
from cfaug.data.io.atomic import NotARegularFile, atomic_open, atomic_path, write_bytes_atomic, write_text_atomic


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_open(path, "w") as fh:
            fh.write("new, half written")
            fh.flush()
            assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # written beside it
            raise RuntimeError("disk on fire")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_writer_that_takes_a_name_and_fails_leaves_the_old_file(tmp_path):
    path = tmp_path / "out.parquet"
    path.write_bytes(b"old")
    with pytest.raises(ValueError):
        with atomic_path(path) as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".out.parquet.")
            tmp.write_bytes(b"half")
            raise ValueError("writer failed")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_write_rows_that_fail_midway_leave_the_old_output_and_no_temporary_file(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('{"text": "kept"}\n', encoding="utf-8")
    rows = [{"text": "a"}, {"text": "b"}, {"text": object()}]  # the third cannot be written as JSON
    with pytest.raises(TypeError):
        write_rows(rows, path)
    assert path.read_text(encoding="utf-8") == '{"text": "kept"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


@pytest.mark.parametrize("name", ["out.jsonl", "out.tsv", "out.parquet"])
def test_a_replaced_file_keeps_its_permission_bits(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    write_rows([{"text": "new", "label": "positive"}], path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_bytes() != b"old"


def test_whole_files_in_one_call(tmp_path):
    assert write_text_atomic(tmp_path / "a" / "b.txt", "é\n").read_text(encoding="utf-8") == "é\n"
    assert write_bytes_atomic(tmp_path / "c.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c.bin"]
    with pytest.raises(ValueError, match="mode 'w' or 'wb'"):
        with atomic_open(tmp_path / "d.txt", "a"):
            pass


def test_a_folder_is_renamed_into_place_whole_or_not_at_all(tmp_path):
    from cfaug.data.io.atomic import atomic_dir

    target = tmp_path / "store" / "model"
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_dir(target) as tmp:
            assert tmp.parent == target.parent and tmp.is_dir() and not any(tmp.iterdir())
            (tmp / "config.json").write_text("{}", encoding="utf-8")
            raise RuntimeError("killed")
    assert not target.exists() and not any(target.parent.iterdir())
    with atomic_dir(target) as tmp:
        (tmp / "config.json").write_text('{"a": 1}', encoding="utf-8")
    assert (target / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    # a second writer that finishes later keeps the first folder and leaves nothing beside it
    with atomic_dir(target) as tmp:
        (tmp / "config.json").write_text('{"a": 2}', encoding="utf-8")
    assert (target / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    assert [p.name for p in target.parent.iterdir()] == ["model"]


def test_a_symbolic_link_to_a_file_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to("real.txt")
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == "real.txt"
    assert target.read_text(encoding="utf-8") == "new\n"


@pytest.mark.parametrize("kind", ["fifo", "link to fifo", "link to device", "folder"])
def test_only_a_regular_file_is_ever_replaced(tmp_path, kind):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    path = {"fifo": fifo, "link to fifo": tmp_path / "l1", "link to device": tmp_path / "l2",
            "folder": tmp_path / "dir"}[kind]
    if kind == "link to fifo":
        path.symlink_to(fifo)
    elif kind == "link to device":
        path.symlink_to(os.devnull)
    elif kind == "folder":
        path.mkdir()
    with pytest.raises(NotARegularFile, match="not a regular file"):
        write_text_atomic(path, "rows\n")
    with pytest.raises(NotARegularFile):
        with atomic_path(path):
            pass
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert path.is_symlink() == kind.startswith("link")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_the_name_dash_is_standard_output_and_a_path_named_dash_is_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_rows([{"text": "é", "label": "x"}], "-")
    assert capsys.readouterr().out == '{"text": "é", "label": "x"}\n'
    assert not (tmp_path / "-").exists()
    write_rows([{"text": "a", "label": "x"}], "-", "tsv")
    assert capsys.readouterr().out.splitlines() == ["text\tlabel", "a\tx"]
    from pathlib import Path

    write_text_atomic(Path("./-"), "a file\n")
    assert (tmp_path / "-").read_text(encoding="utf-8") == "a file\n" and capsys.readouterr().out == ""
    with pytest.raises(DataError, match="standard output"):
        write_rows([{"text": "a"}], "-", "parquet")
