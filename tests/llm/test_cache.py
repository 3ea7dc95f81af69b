"""The SQLite request cache: fingerprints, persistence, several processes, and the client's use of it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from cfaug.llm import LLMConfigError, Request, ResponseCache, create_client, default_cache_dir, fingerprint

BASE = Request(messages=({"role": "user", "content": "hi"},), params={"max_tokens": 5, "temperature": 0.0},
               seed=1, sample=0)


def test_fingerprint_is_stable_and_covers_every_part():
    same = Request(messages=({"content": "hi", "role": "user"},), params={"temperature": 0.0, "max_tokens": 5},
                   seed=1, sample=0)
    key = fingerprint("openai", "m", BASE)
    assert key == fingerprint("openai", "m", same)  # key order does not matter
    variants = [
        fingerprint("transformers", "m", BASE),
        fingerprint("openai", "m2", BASE),
        fingerprint("openai", "m", Request(messages=BASE.messages, params={"max_tokens": 6, "temperature": 0.0}, seed=1)),
        fingerprint("openai", "m", Request(messages=({"role": "user", "content": "hi!"},), params=BASE.params, seed=1)),
        fingerprint("openai", "m", Request(messages=BASE.messages, params=BASE.params, seed=2)),
        fingerprint("openai", "m", Request(messages=BASE.messages, params=BASE.params, seed=1, sample=1)),
        fingerprint("openai", "m", Request(prompt="hi", params=BASE.params, seed=1)),
    ]
    assert len({key, *variants}) == len(variants) + 1


def test_put_get_and_persistence(tmp_path):
    cache = ResponseCache(tmp_path / "c")
    assert cache.get("k") is None
    cache.put("k", "openai", "m", {"text": "answer", "tokens_in": 3})
    cache.flush()
    assert cache.get("k") == {"text": "answer", "tokens_in": 3}
    cache.close()
    again = ResponseCache(tmp_path / "c")
    assert again.get("k")["text"] == "answer" and len(again) == 1
    again.close()


_WRITER = """
import sys
from cfaug.llm.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
tag = sys.argv[2]
for i in range(200):
    cache.put(f"{tag}-{i}", "openai", "m", {"text": f"{tag} {i}"})
    if i % 50 == 0:
        cache.flush()
        assert cache.get(f"{tag}-{i}") is not None
cache.close()
print("done")
"""


def test_several_processes_share_one_cache(tmp_path):
    folder = tmp_path / "shared"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), tag], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b", "c")]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "done"
    cache = ResponseCache(folder)
    assert len(cache) == 600
    assert cache.get("b-199") == {"text": "b 199"}
    cache.close()


def test_a_broken_cache_file_is_named(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "requests.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LLMConfigError, match="requests.sqlite is not a usable cache database"):
        ResponseCache(folder)


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("CFAUG_CACHE_DIR")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert default_cache_dir() == tmp_path / "xdg" / "cfaug" / "llm"


def _run(settings, prompts, same_sample=False):
    async def go():
        client = create_client(settings)
        try:
            answers = await asyncio.gather(*(client.chat([{"role": "user", "content": p}],
                                                         sample=0 if same_sample else i, max_tokens=8)
                                             for i, p in enumerate(prompts)))
        finally:
            await client.aclose()
            client.close()
        return answers, client.report()
    return asyncio.run(go())


def test_rerun_makes_zero_requests(llm_server, llm_settings, _isolated_cache):
    prompts = [f"question {i}" for i in range(20)]
    first, report1 = _run(llm_settings(llm_server), prompts)
    assert llm_server.count() == 20 and report1["llm_requests"] == 20
    second, report2 = _run(llm_settings(llm_server), prompts)  # a new client: as in a new process
    assert llm_server.count() == 20
    assert report2["llm_requests"] == 0 and report2["llm_cache_hits"] == 20
    assert [a.text for a in first] == [a.text for a in second]
    assert all(a.cached for a in second)
    assert (Path(_isolated_cache) / "requests.sqlite").exists()  # the default folder was used


def test_cache_dir_setting(llm_server, llm_settings, tmp_path):
    _run(llm_settings(llm_server, cache_dir=str(tmp_path / "mine")), ["q"])
    assert (tmp_path / "mine" / "requests.sqlite").exists()


def test_no_cache_neither_reads_nor_writes(llm_server, llm_settings, _isolated_cache):
    _run(llm_settings(llm_server, cache=False), ["q1", "q2"])
    _run(llm_settings(llm_server, cache=False), ["q1", "q2"])
    assert llm_server.count() == 4
    assert not (Path(_isolated_cache) / "requests.sqlite").exists()


def test_refresh_asks_again_and_stores_the_new_answer(llm_server, llm_settings):
    llm_server.add("q", "old", times=1)
    llm_server.add("q", "new")
    [a], _ = _run(llm_settings(llm_server), ["q"])
    [b], _ = _run(llm_settings(llm_server, refresh=True), ["q"])
    [c], _ = _run(llm_settings(llm_server), ["q"])
    assert (a.text, b.text, c.text) == ("old", "new", "new")
    assert llm_server.count() == 2 and c.cached


def test_identical_requests_in_flight_are_sent_once(fake_llm, llm_settings):
    with fake_llm.FakeLLM(latency=0.2) as srv:
        answers, report = _run(llm_settings(srv), ["same"] * 5, same_sample=True)
    assert srv.count() == 1
    assert [a.text for a in answers] == ["OK"] * 5
    assert report["llm_requests"] == 1 and report["llm_cache_hits"] == 4


def test_delete_follows_the_writes_queued_before_it(tmp_path):
    cache = ResponseCache(tmp_path / "c")
    cache.put("a", "openai", "m", {"text": "first"})
    cache.put("b", "openai", "m", {"text": "kept"})
    cache.delete("a")
    cache.put("c", "openai", "m", {"text": "third"})
    cache.flush()
    assert cache.get("a") is None and cache.get("b") == {"text": "kept"} and cache.get("c") == {"text": "third"}
    cache.delete("c")
    cache.put("c", "openai", "m", {"text": "again"})  # a write after the delete wins
    cache.close()
    again = ResponseCache(tmp_path / "c")
    assert again.get("c") == {"text": "again"} and len(again) == 2
    again.close()
