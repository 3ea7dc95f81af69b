"""The suite's stand-ins for the user's caches (model store, importance vote cache) live in one temporary
folder per pytest process, set by tests/conftest.py, and a pytest run leaves none of it behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent
VARS = ("CFAUG_MODEL_STORE", "CFAUG_IMPORTANCE_CACHE")


def test_the_caches_are_in_this_session_s_temporary_folder():
    dirs = [Path(os.environ[var]) for var in VARS]
    session = dirs[0].parent
    assert all(d.parent == session and d.is_dir() for d in dirs)
    assert session.name.startswith("cfaug-test-session-")
    assert session.parent.resolve() == Path(tempfile.gettempdir()).resolve()
    home_cache = Path.home() / ".cache" / "cfaug"
    assert not any(d.resolve().is_relative_to(home_cache.resolve()) for d in dirs)


# run by a child pytest with the repository's conftest as a plugin; writes what it saw to $RECORD
CHILD_TEST = textwrap.dedent('''
    import json, os, pathlib, subprocess, sys

    def test_record():
        seen = {var: os.environ[var] for var in ("CFAUG_MODEL_STORE", "CFAUG_IMPORTANCE_CACHE")}
        for path in seen.values():
            assert os.path.isdir(path)
            (pathlib.Path(path) / "sub").mkdir()
            (pathlib.Path(path) / "sub" / "artifact.bin").write_bytes(b"x")
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['CFAUG_MODEL_STORE'])"],
                               capture_output=True, text=True, check=True)
        seen["subprocess"] = child.stdout.strip()
        pathlib.Path(os.environ["RECORD"]).write_text(json.dumps(seen))
''')


def test_a_pytest_run_removes_its_temporary_folder(tmp_path: Path):
    temp_root = tmp_path / "tmp"   # the child's TMPDIR: whatever it leaves there is left behind
    temp_root.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_child.py").write_text(CHILD_TEST, encoding="utf-8")
    record = tmp_path / "seen.json"
    env = {**os.environ, "TMPDIR": str(temp_root), "RECORD": str(record),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    for var in VARS:
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                           "test_child.py"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(record.read_text())
    assert seen["subprocess"] == seen["CFAUG_MODEL_STORE"]
    for var in VARS:
        path = Path(seen[var])
        assert path.parent.name.startswith("cfaug-test-session-")
        assert path.parent.parent.resolve() == temp_root.resolve()
        assert not path.exists()
    assert list(temp_root.iterdir()) == []
