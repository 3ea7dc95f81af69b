"""``cfaug review serve`` as a user runs it, in a subprocess: it prints its tokenized URL on a line of its
own, answers 401 without the token, keeps every decision it acknowledged when SIGKILLed in the middle of
decisions being posted, resumes at the first undecided item after a restart, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from review_runs import real_run

from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{20,})$")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return real_run(tmp_path_factory.mktemp("review-kill"), rows=40)


class Server:
    """``python -m cfaug review serve RUN_DIR --no-browser --port 0`` and what it printed."""

    def __init__(self, run_dir, *extra: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "CFAUG_REVIEW_TOKEN"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cfaug", "review", "serve", str(run_dir), "--no-browser", "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.stdout: list[str] = []
        deadline = time.monotonic() + 90
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.proc.kill()
                raise AssertionError(f"no URL printed; stdout {self.stdout}, stderr {self.proc.stderr.read()}")
            self.stdout.append(line)
            m = URL.match(line.rstrip("\n"))
            if m:
                break
        self.url = line.rstrip("\n")
        self.base, self.token = f"http://127.0.0.1:{m.group(1)}", m.group(2)
        self.csrf = self.get("/api/session")["csrf"]

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(self, method: str, path: str, body: dict | None = None, *, token: bool = True):
        sep = "&" if "?" in path else "?"
        url = self.base + path + (f"{sep}token={self.token}" if token else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Origin": self.base} if body is not None else {}
        if body is not None and token:
            headers["X-CSRF-Token"] = self.csrf
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body: dict):
        return self.request("POST", path, body)


def test_serve_prints_url_needs_token_and_stops_on_ctrl_c(run_dir):
    server = Server(run_dir, "--annotator", "dana")
    try:
        assert [ln for ln in server.stdout if "token=" in ln] == [server.url + "\n"]  # a line of its own
        with pytest.raises(urllib.error.HTTPError) as exc:
            server.request("GET", "/api/session", token=False)
        assert exc.value.code == 401
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(server.base + "/?token=" + "x" * len(server.token), timeout=30)
        assert exc.value.code == 403
        assert server.get("/api/session")["annotator"] == "dana"
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=30) == 0
        assert "Traceback" not in server.proc.stderr.read()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def test_sigkill_loses_no_acknowledged_decision_and_restart_resumes(run_dir):
    order = [it.id for it in load_items(run_dir).ordered()]
    assert len(order) >= 30
    server = Server(run_dir)
    acked: dict[str, tuple[str, int]] = {}  # item -> (decision, seq) the server acknowledged
    lock = threading.Lock()
    work = iter(enumerate(order))
    kinds = ["accepted", "rejected", "skipped", "not_flipped"]

    def poster() -> None:
        while True:
            with lock:
                nxt = next(work, None)
            if nxt is None:
                return
            i, item = nxt
            try:
                body = server.post("/api/decisions", {"annotator": "ann", "item": item, "decision": kinds[i % 4],
                                                      "request_id": f"req-{i}"})
            except (OSError, urllib.error.URLError):
                return  # the server is gone: this decision was never acknowledged
            with lock:
                acked[item] = (body["decision"]["decision"], body["decision"]["seq"])

    try:
        threads = [threading.Thread(target=poster) for _ in range(3)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(acked) < 6:  # decisions are being acknowledged, and more are in flight
            assert time.monotonic() < deadline and any(t.is_alive() for t in threads), \
                f"the server acknowledged only {len(acked)} decisions"
            time.sleep(0.002)
        os.kill(server.proc.pid, signal.SIGKILL)
        for t in threads:
            t.join(timeout=60)
        assert server.proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    assert 6 <= len(acked) < len(order), "the kill came after every decision was made"

    with ReviewStore(run_dir, create=False) as store:
        live = store.current("ann")
    for item, (decision, seq) in acked.items():
        assert (item, "ann") in live, f"acknowledged decision on {item} lost"
        assert (live[(item, "ann")].decision, live[(item, "ann")].seq) == (decision, seq)
    # what the store holds beyond the acknowledged ones were requests in flight at the kill, each once
    assert len({d.request_id for d in live.values()}) == len(live)

    first_undecided = next(it for it in order if (it, "ann") not in live)
    restarted = Server(run_dir)
    try:
        data = restarted.get("/api/item?annotator=ann&undecided=1&pos=0")  # what the page asks on load
        assert data["item"]["id"] == first_undecided
        assert data["decided"] == len(live)
        # a retry of an acknowledged request (the page did not hear the answer) is not recorded twice
        item, (decision, seq) = next(iter(acked.items()))
        i = order.index(item)
        again = restarted.post("/api/decisions", {"annotator": "ann", "item": item, "decision": kinds[i % 4],
                                                  "request_id": f"req-{i}"})
        assert again["decision"]["seq"] == seq
    finally:
        restarted.proc.send_signal(signal.SIGINT)
        try:
            restarted.proc.wait(timeout=30)
        finally:
            if restarted.proc.poll() is None:
                restarted.proc.kill()
