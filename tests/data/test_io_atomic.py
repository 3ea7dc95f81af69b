"""Atomic writes (:mod:`cfaug.data.io.atomic`): a write that fails midway leaves the old file as it was and
no temporary file; a replaced file keeps its permission bits."""

from __future__ import annotations

import os
import stat

import pytest

from cfaug.data.io import write_rows
from cfaug.data.io.atomic import atomic_open, atomic_path, write_bytes_atomic, write_text_atomic


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
