"""``cfaug --help`` and ``cfaug methods``, run as a user would (new processes)."""

import re
import subprocess
import sys

from cfaug.cli import main
from cfaug.methods.auto_cad import AutoCADConfig


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "cfaug", *args], capture_output=True, text=True, timeout=120)


def test_help_lists_the_subcommands():
    res = run_cli("--help")
    assert res.returncode == 0
    for cmd in ("augment", "methods", "evaluate"):
        assert f"    {cmd}" in res.stdout


def test_no_subcommand_prints_help_and_fails():
    res = run_cli()
    assert res.returncode == 2 and "usage: cfaug" in res.stdout


def test_methods_lists_auto_cad_with_its_tasks_and_description():
    res = run_cli("methods")
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("auto-cad.v1 "))
    assert "[sentiment, rating]" in line
    description = line.split("]", 1)[1].strip()
    assert len(description) > 20


def test_methods_verbose_lists_parameters_with_defaults(capsys):
    assert main(["methods", "-v"]) == 0
    out = capsys.readouterr().out
    block = re.search(r"^auto-cad\.v1 .*\n((?:    .*\n)+)", out, re.M).group(1)
    lines = {ln.split(" = ", 1)[0].strip(): ln for ln in block.splitlines()}
    # name = default  [range] or {choices}  documentation
    assert re.fullmatch(rf"    min_similarity = {AutoCADConfig.min_similarity!r}  \[0\.\.1\] +filter: edited-sentence "
                        r"embedding similarity at least this .*", lines["min_similarity"])
    assert re.fullmatch(rf"    max_edit_rate = {AutoCADConfig.max_edit_rate!r}  \[0\.\.\] +filter: token edit rate at most this \(none = no limit\)",
                        lines["max_edit_rate"])
    assert re.fullmatch(r"    replace = 'all'  \{all, until-flip, weighed\} +REP-CT: .*", lines["replace"])
    assert re.fullmatch(r"    classifier = 'tfidf' +classifier C: .*", lines["classifier"])
    # presets, with their values and what they need
    assert re.search(r"^    preset paper: Yang et al.'s setup.*\(variants=rm,rep,syn, .*min_moverscore=0\.55.*; needs mlm\)$",
                     block, re.M)
