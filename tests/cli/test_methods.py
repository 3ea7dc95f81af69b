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
    c = AutoCADConfig
    assert re.fullmatch(rf"    max_edit_rate = {c.max_edit_rate!r}  \[0\.\.\] +filter: token edit rate at most this "
                        r"\(none = no limit\); the 95th percentile of human CAD-IMDB dev rewrites is 0\.32",
                        lines["max_edit_rate"])
    assert re.fullmatch(rf"    max_edit_rate_short = {c.max_edit_rate_short!r}  \[0\.\.\] +filter: token edit rate "
                        r"of a text of at most 20 tokens .*", lines["max_edit_rate_short"])
    # precision first: the flip filter, the completeness check and the choice step, with their defaults
    assert c.require_flip is True and c.completeness is True and c.keep == 1
    assert re.fullmatch(r"    require_flip = True +precision first: a rewrite is written only when C gives it the "
                        r"target with at least flip_min_prob .*; false: every rewrite is written with its graded "
                        r"confidence .*", lines["require_flip"])
    assert re.fullmatch(rf"    flip_min_prob = {c.flip_min_prob!r}  \[0\.\.1\] +require_flip: C's probability of "
                        r"the target a written rewrite needs .*", lines["flip_min_prob"])
    assert re.fullmatch(rf"    flip_max_words = {c.flip_max_words!r}  \[1\.\.\] +require_flip: a text of more words "
                        r"than this \(a review\) is written whatever C says, with its graded confidence.*",
                        lines["flip_max_words"])
    assert re.fullmatch(rf"    min_target_prob = {c.min_target_prob!r}  \[0\.\.1\] +C's probability of the target "
                        r"RM-CT/REP-CT edit toward: .*", lines["min_target_prob"])
    assert re.fullmatch(r"    completeness = True +require_flip: also drop a rewrite that leaves an opinion of the "
                        r"source's polarity standing.*", lines["completeness"])
    assert re.fullmatch(r"    keep = 1  \[1\.\.10\] +rewrites written per row and variant: the best of the "
                        r"candidates \(alternatives\) by the shared choice step .*", lines["keep"])
    assert re.fullmatch(rf"    alternatives = {c.alternatives!r}  \[1\.\.10\] +REP-CT candidates per row: .*; "
                        r"the choice step writes the best keep of them", lines["alternatives"])
    assert re.fullmatch(r"    choice_lm = None +a causal language model that breaks near ties of the choice step .*",
                        lines["choice_lm"])
    assert re.fullmatch(r"    replace = 'all'  \{all, until-flip, weighed\} +REP-CT: .*", lines["replace"])
    assert re.fullmatch(r"    classifier = 'tfidf' +classifier C: .*", lines["classifier"])
    # presets, with their values and what they need
    assert re.search(r"^    preset paper: Yang et al.'s setup.*\(variants=rm,rep,syn, .*min_moverscore=0\.55.*; needs mlm\)$",
                     block, re.M)
    assert re.search(r"^    preset thorough: more candidates, read more closely: .*\(alternatives=5, "
                     r"negation_weight=3\.0, choice_lm=auto\)$", block, re.M)
    # the LLM methods: the completeness check after their flip check, and the choice step
    llm = re.search(r"^zero-shot\.v1 .*\n((?:    .*\n)+)", out, re.M).group(1)
    lines = {ln.split(" = ", 1)[0].strip(): ln for ln in llm.splitlines()}
    assert re.fullmatch(r"    completeness = True +with the flip check: also drop a rewrite that leaves an opinion "
                        r"of the source's polarity standing .*", lines["completeness"])
    assert re.fullmatch(r"    keep = 1  \[1\.\.20\] +rewrites written per item: the best of its candidates .* by "
                        r"the shared choice step .*", lines["keep"])
