"""The review decision store: durable before record() returns (SIGKILL right after loses nothing), safe
across threads and processes (nothing lost or duplicated), idempotent request ids, append-only undo,
clear errors for corrupt and foreign files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from cfaug.run.decisions import DECISIONS, STORE_FILE, Decision, ReviewStore, StoreError, has_decisions

SRC = str(Path(__file__).resolve().parents[2] / "src")


def run_child(code: str, *args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


# -- recording and reading ---------------------------------------------------------------------------------
def test_record_current_history(tmp_path):
    with ReviewStore(tmp_path) as store:
        a = store.record("k1#0", "ann", "accepted", seconds=2.5)
        b = store.record("k1#1", "ann", "edited", fields={"text": "new text"})
        c = store.record("k1#0", "bob", "other_label", label="neutral")
        d = store.record("k1#0", "ann", "rejected")  # ann changes her mind on k1#0
        assert [x.seq for x in (a, b, c, d)] == sorted({a.seq, b.seq, c.seq, d.seq})
        assert isinstance(a, Decision) and a.seconds == 2.5 and a.time > 0
        cur = store.current()
        assert cur == {("k1#1", "ann"): b, ("k1#0", "bob"): c, ("k1#0", "ann"): d}
        assert list(cur) == [("k1#1", "ann"), ("k1#0", "bob"), ("k1#0", "ann")]  # order of the live decisions
        assert store.current("bob") == {("k1#0", "bob"): c}
        assert store.history() == [a, b, c, d]
        assert store.annotators() == ["ann", "bob"]
        assert (tmp_path / STORE_FILE).exists()
    with ReviewStore(tmp_path, create=False) as again:
        assert again.history() == [a, b, c, d]
        assert again.current()[("k1#1", "ann")].fields == {"text": "new text"}
        mode = again._conn.execute("PRAGMA journal_mode").fetchone()[0]
        sync = again._conn.execute("PRAGMA synchronous").fetchone()[0]
    assert (mode, sync) == ("wal", 2)  # 2 = FULL


@pytest.mark.parametrize("kwargs, problem", [
    (dict(decision="maybe"), "unknown decision"),
    (dict(decision="edited"), "needs fields"),
    (dict(decision="edited", fields={"text": 3}), "new text"),
    (dict(decision="accepted", fields={"text": "x"}), "only recorded with an 'edited'"),
    (dict(decision="other_label"), "label must be"),
    (dict(decision="accepted", label="pos"), "only recorded with an 'other_label'"),
    (dict(decision="accepted", seconds=-1), "seconds"),
    (dict(decision="accepted", seconds=float("nan")), "seconds"),
    (dict(decision="accepted", item=""), "item must be"),
    (dict(decision="accepted", annotator=""), "annotator must be"),
])
def test_record_validates(tmp_path, kwargs, problem):
    args = {"item": "k#0", "annotator": "ann", **kwargs}
    with ReviewStore(tmp_path) as store:
        with pytest.raises(ValueError, match=problem):
            store.record(args.pop("item"), args.pop("annotator"), args.pop("decision"), **args)
        assert store.history() == []


def test_every_decision_kind_round_trips(tmp_path):
    extra = {"edited": {"fields": {"text": "t", "hypothesis": "h"}}, "other_label": {"label": "neutral"}}
    with ReviewStore(tmp_path) as store:
        made = [store.record(f"k#{n}", "ann", d, **extra.get(d, {})) for n, d in enumerate(DECISIONS)]
    with ReviewStore(tmp_path, create=False) as store:
        assert [d.decision for d in store.history()] == list(DECISIONS)
        assert store.history() == made


# -- request ids --------------------------------------------------------------------------------------------
def test_request_id_makes_a_retry_idempotent(tmp_path):
    with ReviewStore(tmp_path) as store:
        first = store.record("k#0", "ann", "accepted", request_id="req-1")
        again = store.record("k#0", "ann", "accepted", request_id="req-1")
        # a retry whose body changed still returns what was first recorded, and adds nothing
        other = store.record("k#9", "ann", "rejected", request_id="req-1")
        assert first == again == other
        assert len(store.history()) == 1
        # ids are per annotator: another annotator's identical id is another request
        bob = store.record("k#0", "bob", "rejected", request_id="req-1")
        assert bob.seq != first.seq and len(store.history()) == 2
    with ReviewStore(tmp_path) as store:  # also after reopening
        assert store.record("k#0", "ann", "accepted", request_id="req-1") == first
        assert len(store.history()) == 2


# -- undo ----------------------------------------------------------------------------------------------------
def test_undo_is_append_only_and_per_annotator(tmp_path):
    with ReviewStore(tmp_path) as store:
        a1 = store.record("k#0", "ann", "accepted")
        a2 = store.record("k#0", "ann", "rejected")
        b1 = store.record("k#1", "bob", "accepted")
        undone = store.undo("ann")
        assert undone.seq == a2.seq and undone.undone
        assert store.current() == {("k#0", "ann"): a1, ("k#1", "bob"): b1}  # ann's earlier decision is back
        assert store.undo("ann").seq == a1.seq
        assert store.current() == {("k#1", "bob"): b1}
        assert store.undo("ann") is None
        assert store.undo("nobody") is None
        hist = store.history()
        assert [(d.seq, d.undone) for d in hist] == [(a1.seq, True), (a2.seq, True), (b1.seq, False)]
    # nothing was deleted: every decision row is still in the file, the undos are rows of their own
    con = sqlite3.connect(tmp_path / STORE_FILE)
    assert con.execute("SELECT COUNT(*) FROM decisions").fetchone()[0] == 3
    assert con.execute("SELECT COUNT(*) FROM undos").fetchone()[0] == 2
    con.close()


def test_undo_request_id_is_idempotent(tmp_path):
    with ReviewStore(tmp_path) as store:
        a1 = store.record("k#0", "ann", "accepted")
        a2 = store.record("k#1", "ann", "accepted")
        assert store.undo("ann", request_id="u1").seq == a2.seq
        assert store.undo("ann", request_id="u1").seq == a2.seq  # the retry voids nothing more
        assert store.current() == {("k#0", "ann"): a1}
        assert has_decisions(tmp_path)
        store.undo("ann")
    assert not has_decisions(tmp_path)  # the store exists but every decision was undone


def test_has_decisions(tmp_path):
    assert not has_decisions(tmp_path)
    assert not (tmp_path / STORE_FILE).exists()  # asking creates nothing
    with ReviewStore(tmp_path) as store:
        assert not has_decisions(tmp_path)
        store.record("k#0", "ann", "skipped")
    assert has_decisions(tmp_path)


# -- durability ----------------------------------------------------------------------------------------------
def test_sigkill_right_after_record_returns_loses_nothing(tmp_path):
    child = run_child("""
        import os, signal, sys
        from cfaug.run.decisions import ReviewStore
        store = ReviewStore(sys.argv[1])
        store.record("k#0", "ann", "accepted", request_id="r0")
        store.record("k#1", "ann", "edited", fields={"text": "fixed"}, seconds=4.0)
        os.kill(os.getpid(), signal.SIGKILL)
    """, str(tmp_path))
    out, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL, err
    with ReviewStore(tmp_path, create=False) as store:
        cur = store.current()
    assert set(cur) == {("k#0", "ann"), ("k#1", "ann")}
    assert cur[("k#1", "ann")].fields == {"text": "fixed"} and cur[("k#1", "ann")].seconds == 4.0


def test_sigkill_mid_stream_keeps_every_acknowledged_decision(tmp_path):
    """The child acknowledges each decision on stdout (flushed) right after record() returns and is killed
    while still recording. Every decision it acknowledged is in the store, in order, and at most one more
    (committed, killed before it could print)."""
    child = run_child("""
        import sys
        from cfaug.run.decisions import ReviewStore
        store = ReviewStore(sys.argv[1])
        for i in range(100000):
            d = store.record(f"k#{i}", "ann", "accepted", request_id=f"r{i}")
            print(d.seq, flush=True)
    """, str(tmp_path))
    acked = []
    for line in child.stdout:
        acked.append(int(line))
        if len(acked) == 40:
            child.send_signal(signal.SIGKILL)
            break
    rest, _ = child.communicate(timeout=60)
    acked += [int(x) for x in rest.split()]  # printed before the kill, still in the pipe
    assert child.returncode == -signal.SIGKILL
    with ReviewStore(tmp_path, create=False) as store:
        seqs = [d.seq for d in store.history()]
    assert seqs[: len(acked)] == acked
    assert len(seqs) - len(acked) in (0, 1)
    assert seqs == list(range(1, len(seqs) + 1))


# -- concurrency ---------------------------------------------------------------------------------------------
def test_two_processes_record_concurrently(tmp_path):
    """Two processes (two tabs of one annotator, and each its own annotator) record at once: every
    decision is there once, and the requests both sent with the same id were recorded once."""
    code = """
        import json, os, sys, time
        from cfaug.run.decisions import ReviewStore
        run_dir, me, go = sys.argv[1], sys.argv[2], sys.argv[3]
        store = ReviewStore(run_dir)
        while not os.path.exists(go):  # both start recording at the same moment
            time.sleep(0.005)
        shared = {}
        other = os.path.join(os.path.dirname(go), "p2-half" if me == "p1" else "p1-half")
        for i in range(60):
            store.record(f"own#{i}", me, "accepted", request_id=f"{me}-{i}")
            d = store.record(f"shared#{i}", "tabs", "rejected", request_id=f"same-{i}")
            shared[i] = d.seq
            if i == 20:  # neither finishes before the other has recorded too: their writes overlap
                open(os.path.join(os.path.dirname(go), me + "-half"), "w").close()
                deadline = time.time() + 60
                while not os.path.exists(other) and time.time() < deadline:
                    time.sleep(0.005)
        print(json.dumps(shared))
    """
    go = tmp_path / "go"
    children = [run_child(code, str(tmp_path), name, str(go)) for name in ("p1", "p2")]
    go.touch()
    outs = []
    for c in children:
        out, err = c.communicate(timeout=120)
        assert c.returncode == 0, err
        outs.append(json.loads(out))
    assert outs[0] == outs[1]  # both tabs were answered with the one decision recorded per request id
    with ReviewStore(tmp_path, create=False) as store:
        hist = store.history()
    assert len(hist) == 60 * 3
    seqs = {a: [d.seq for d in hist if d.annotator == a] for a in ("p1", "p2")}
    assert seqs["p1"][0] < seqs["p2"][-1] and seqs["p2"][0] < seqs["p1"][-1]  # they recorded at the same time
    assert len({d.seq for d in hist}) == len(hist)
    by_annotator = {a: sorted(d.item for d in hist if d.annotator == a) for a in ("p1", "p2", "tabs")}
    assert by_annotator["p1"] == sorted(f"own#{i}" for i in range(60))
    assert by_annotator["p2"] == sorted(f"own#{i}" for i in range(60))
    assert by_annotator["tabs"] == sorted(f"shared#{i}" for i in range(60))


def test_threads_share_one_store(tmp_path):
    store = ReviewStore(tmp_path)
    errors = []

    def work(t):
        try:
            for i in range(25):
                store.record(f"k#{t}-{i}", f"ann{t % 2}", "accepted", request_id=f"{t}-{i}")
                store.record(f"k#{t}-{i}", f"ann{t % 2}", "accepted", request_id=f"{t}-{i}")  # a retry
                store.current()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store.history()) == 6 * 25
    assert len(store.current()) == 6 * 25
    store.close()


# -- broken and foreign files ----------------------------------------------------------------------------------
def test_missing_store_without_create(tmp_path):
    with pytest.raises(StoreError, match=str(tmp_path / STORE_FILE)):
        ReviewStore(tmp_path, create=False)
    assert not (tmp_path / STORE_FILE).exists()
    with pytest.raises(StoreError, match="does not exist"):
        ReviewStore(tmp_path / "nowhere")


def test_a_file_that_is_not_a_database(tmp_path):
    (tmp_path / STORE_FILE).write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError) as err:
        ReviewStore(tmp_path)
    assert str(tmp_path / STORE_FILE) in str(err.value)
    with pytest.raises(StoreError, match=STORE_FILE):
        has_decisions(tmp_path)


def test_a_damaged_store(tmp_path):
    with ReviewStore(tmp_path) as store:
        for i in range(300):
            store.record(f"item-with-a-long-name-{i}" * 3, "ann", "edited", fields={"text": "x" * 200})
    con = sqlite3.connect(tmp_path / STORE_FILE)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    path = tmp_path / STORE_FILE
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * 4096
    data[2 * 4096: 6 * 4096] = os.urandom(4 * 4096)  # scribble over pages in the middle
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as err:
        with ReviewStore(tmp_path) as store:
            store.history()
    assert str(path) in str(err.value)


def test_a_foreign_sqlite_database(tmp_path):
    con = sqlite3.connect(tmp_path / STORE_FILE)
    con.execute("CREATE TABLE users (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=r"review\.sqlite: an SQLite database of something else \(tables: users\)"):
        ReviewStore(tmp_path)
    con = sqlite3.connect(tmp_path / STORE_FILE)  # left as it was
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["users"]
    con.close()


def test_a_sqlite_database_with_another_apps_meta(tmp_path):
    con = sqlite3.connect(tmp_path / STORE_FILE)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('app', 'something-else')")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="something-else"):
        ReviewStore(tmp_path)


def test_a_store_from_a_newer_cfaug(tmp_path):
    ReviewStore(tmp_path).close()
    con = sqlite3.connect(tmp_path / STORE_FILE)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer cfaug"):
        ReviewStore(tmp_path)
