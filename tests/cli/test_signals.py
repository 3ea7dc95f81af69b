"""SIGTERM (what ``timeout``, ``docker stop`` and batch schedulers send) stops a run as Ctrl-C does: every
clean-up runs, finished items stay in the run directory, the command says "interrupted" and exits 143, and
a rerun of the same command resumes. The handler is cfaug's only while :func:`cfaug.cli.main` runs."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.data.records import Counterfactual
from cfaug.methods.base import METHODS, Method
from cfaug.registry import Entry


class Killed(BaseException):
    """Raised by the test's own SIGTERM handler: SIGTERM reached a handler that is not cfaug's."""


def killed(signum, frame):
    raise Killed()


@dataclass
class NoParams:
    pass


class SendsSigterm(Method):
    """Appends " (flipped)"; on a text holding STOP it sends SIGTERM to the cfaug process once (as ``timeout``
    would), then works on for a while (the signal must cut that short). Records where each text was rewritten."""

    name = "sends-sigterm.v1"
    Config = NoParams
    supported_tasks = ("sentiment",)
    default_batch_size = 1
    driver = 0
    sent: Path | None = None  # exists once SIGTERM was sent

    @staticmethod
    def stop_here(text: str) -> bool:
        if "STOP" not in text or SendsSigterm.sent.exists():
            return False
        SendsSigterm.sent.touch()
        os.kill(SendsSigterm.driver, signal.SIGTERM)
        return True

    def generate(self, items, task):
        out = []
        for it in items:
            text = it.record.text()
            if self.stop_here(text):
                time.sleep(20)
            meta = {"pid": os.getpid(), "sigterm": _disposition()}
            out.append([Counterfactual(it.record, {"text": text + " (flipped)"}, it.target, self.name, meta)])
        return out


class AsyncSendsSigterm(SendsSigterm):
    name = "async-sends-sigterm.v1"
    work_unit = "item"

    async def agenerate(self, item, task):
        import asyncio

        if self.stop_here(item.record.text()):
            await asyncio.sleep(20)
        return SendsSigterm.generate(self, [item], task)[0]


def _disposition() -> str:
    handler = signal.getsignal(signal.SIGTERM)
    return "default" if handler == signal.SIG_DFL else getattr(handler, "__name__", repr(handler))


@pytest.fixture(autouse=True)
def registered(monkeypatch, tmp_path):
    for cls in (SendsSigterm, AsyncSendsSigterm):
        monkeypatch.setitem(METHODS._entries, cls.name, Entry(cls.name, "test method", cls))
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(tmp_path / "store"))
    monkeypatch.setattr(SendsSigterm, "driver", os.getpid())
    monkeypatch.setattr(SendsSigterm, "sent", tmp_path / "sigterm-sent")
    previous = signal.signal(signal.SIGTERM, killed)
    yield
    signal.signal(signal.SIGTERM, previous)


def reviews(tmp_path, *texts):
    f = tmp_path / "in.csv"
    f.write_text("id,text,label\n" + "".join(f"{chr(97 + n)},{t},pos\n" for n, t in enumerate(texts)),
                 encoding="utf-8")
    return f


@pytest.mark.parametrize("method,workers", [("sends-sigterm", "1"), ("sends-sigterm", "2"),
                                            ("async-sends-sigterm", "1")])
def test_sigterm_stops_the_run_like_ctrl_c_and_exits_143(tmp_path, capsys, method, workers):
    inp = reviews(tmp_path, "a fine film", "STOP here", "a dull plot", "a warm cast")
    out = tmp_path / "o.jsonl"
    cmd = ["augment", str(inp), "-o", str(out), "--method", method, "--no-progress", "--workers", workers,
           "--concurrency", "1"]
    started = time.monotonic()
    code = main(cmd)
    err = capsys.readouterr().err
    assert code == 143, err
    assert time.monotonic() - started < 15  # the work in hand was cut short, not waited for
    assert err.strip().splitlines()[-1] == "interrupted; rerun the same command to resume"
    assert "Traceback" not in err
    assert signal.getsignal(signal.SIGTERM) is killed  # the caller's handler is back
    run_dir = tmp_path / "o.jsonl.run"
    results = run_dir / "results.jsonl"
    done = {json.loads(x)["source_id"] for x in results.read_text().splitlines()} if results.exists() else set()
    assert "b" not in done  # the item in hand when SIGTERM came is not recorded as finished
    if workers == "1":
        assert "a" in done  # what finished before it is kept (with workers, "a" may still be in flight)
    assert not (run_dir / "lock").exists() and not out.exists()
    # a rerun of the same command resumes: what was finished is kept, the rest is done
    assert main(cmd) == 0, capsys.readouterr().err
    keys = [json.loads(x)["source_id"] for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert sorted(keys) == ["a", "b", "c", "d"] and len(out.read_text().splitlines()) == 4


def test_a_worker_process_is_ended_by_sigterm_not_made_to_stop_cleanly(tmp_path, capsys):
    """A pool worker does not take the driver's handler: SIGTERM ends it at once (the driver, which stops
    cleanly, ends the ones still working when it is interrupted)."""
    inp = reviews(tmp_path, "a fine film", "a dull plot", "a warm cast", "a cold room")
    out = tmp_path / "o.jsonl"
    code = main(["augment", str(inp), "-o", str(out), "--method", "sends-sigterm", "--no-progress",
                 "--workers", "2"])
    assert code == 0, capsys.readouterr().err
    metas = [json.loads(x)["meta"] for x in out.read_text().splitlines()]
    assert {m["pid"] for m in metas} - {os.getpid()}  # the rows were made in worker processes
    assert {m["sigterm"] for m in metas} == {"default"}
