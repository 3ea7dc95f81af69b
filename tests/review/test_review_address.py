"""Where ``cfaug review serve`` listens: the run directory's last address is kept for the next start, and a
server on every interface names the addresses other machines can use."""

from __future__ import annotations

import socket

from cfaug.review.address import ADDRESS_FILE, last_address, other_machines_hosts, remember, url_host


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
