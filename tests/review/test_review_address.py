"""Where ``cfaug review serve`` listens: the run directory's last address is kept for the next start, and a
server on every interface names the addresses other machines can use; the run's access token is kept too,
in a file only its owner can read."""

from __future__ import annotations

import os
import socket
import stat

from cfaug.review.address import (ADDRESS_FILE, TOKEN_FILE, last_address, other_machines_hosts, remember,
                                  store_token, stored_token, url_host)
from cfaug.review.server import run_token


def test_the_last_address_is_kept_per_annotator(tmp_path):
    assert last_address(tmp_path) is None
    remember(tmp_path, "127.0.0.1", 40321)
    remember(tmp_path, "0.0.0.0", 40322, annotator="dana")
    assert last_address(tmp_path) == ("127.0.0.1", 40321)
    assert last_address(tmp_path, "dana") == ("0.0.0.0", 40322)
    assert last_address(tmp_path, "eve") is None
    remember(tmp_path, "127.0.0.1", 40400)
    assert last_address(tmp_path) == ("127.0.0.1", 40400) and last_address(tmp_path, "dana")[1] == 40322
    assert "token" not in (tmp_path / ADDRESS_FILE).read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == [ADDRESS_FILE]  # no temporary file left behind


def test_an_unreadable_record_is_no_address(tmp_path):
    (tmp_path / ADDRESS_FILE).write_text("{not json", encoding="utf-8")
    assert last_address(tmp_path) is None
    (tmp_path / ADDRESS_FILE).write_text('{"servers": {"": {"host": "127.0.0.1", "port": 99999}}}',
                                         encoding="utf-8")
    assert last_address(tmp_path) is None
    remember(tmp_path, "127.0.0.1", 5000)  # a damaged record is replaced
    assert last_address(tmp_path) == ("127.0.0.1", 5000)


def test_every_interface_names_this_machine_for_others():
    assert url_host("0.0.0.0") == "127.0.0.1" and url_host("::") == "[::1]" and url_host("::1") == "[::1]"
    hosts = other_machines_hosts("0.0.0.0")
    assert socket.gethostname() in hosts or socket.gethostname() == "localhost"
    assert not any(h.startswith("127.") for h in hosts)
    assert other_machines_hosts("127.0.0.1") == [] and other_machines_hosts("192.0.2.7") == []


def test_the_token_is_kept_per_annotator_readable_by_its_owner_only(tmp_path):
    assert stored_token(tmp_path) == (None, None)
    path = store_token(tmp_path, "token-of-the-run-0123456789")
    assert path == tmp_path / TOKEN_FILE and stat.S_IMODE(path.stat().st_mode) == 0o600
    store_token(tmp_path, "token-of-dana-0123456789", annotator="dana")
    assert stored_token(tmp_path) == ("token-of-the-run-0123456789", None)
    assert stored_token(tmp_path, "dana") == ("token-of-dana-0123456789", None)
    assert stored_token(tmp_path, "eve") == (None, None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [TOKEN_FILE]  # no temporary file left behind
    path.chmod(0o640)  # others may have read it: not trusted
    token, problem = stored_token(tmp_path)
    assert token is None and "can be read by other users" in problem and str(path) in problem
    path.write_text("{not json", encoding="utf-8")
    path.chmod(0o600)
    assert stored_token(tmp_path)[0] is None


def test_serve_keeps_the_run_token_across_starts(tmp_path):
    said: list[str] = []
    first = run_token(tmp_path, None, say=said.append)
    assert len(first) >= 40 and said == []
    assert run_token(tmp_path, None, say=said.append) == first  # a restart: the same token
    assert run_token(tmp_path, "dana", say=said.append) != first  # a server of its own for dana
    assert run_token(tmp_path, None, say=said.append) == first
    (tmp_path / TOKEN_FILE).chmod(0o644)
    renewed = run_token(tmp_path, None, say=said.append)
    assert renewed != first and stored_token(tmp_path) == (renewed, None)
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600
    assert len(said) == 1 and "can be read by other users" in said[0] and "a new token replaces it" in said[0]
    if os.geteuid() != 0:  # root writes to a read-only folder
        os.remove(tmp_path / TOKEN_FILE)
        tmp_path.chmod(0o500)
        try:
            assert run_token(tmp_path, None, say=said.append) != renewed
            assert "cannot keep the access token" in said[-1]
        finally:
            tmp_path.chmod(0o700)
