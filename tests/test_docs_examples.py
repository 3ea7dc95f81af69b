"""The code examples of README.md and docs/ run, so that an example cannot outlive the code it shows.

Every fenced block is collected, document by document, in order:

- ``python`` blocks run in one namespace per document; a block with ``>>>`` prompts runs as a doctest, so
  the output it shows must be the output it gives.
- ``bash`` / ``sh`` / ``console`` blocks: each ``cfaug ...`` command (continuation lines joined, ``$ `` and
  trailing comments dropped, ``VAR=value`` prefixes set) runs through ``cfaug.cli.main`` and must exit 0.
  Other programs (``pip``, ``python bench/...``, ``mkdocs``) are not run: installing and benchmarking are
  what the rest of CI does. ``cfaug review serve`` is not run either: a server runs until it is stopped
  (tests/review drives it).
- Other languages (``text``, ``yaml``, ``json``...) are shown output or configuration, not run. Every block
  names its language, so that none escapes by being untagged. A ``text`` block marked
  ``<!-- docs-test: output -->`` on the line before its fence shows what the block before it prints: each
  of its lines must be a line that block printed (a line ending in ``...`` matches by its beginning).

A block that cannot run here says so on the line before its fence, with the reason:
``<!-- docs-test: skip needs a GPU -->``. A skip without a reason fails, and a skipped block's ``cfaug``
commands must still parse (command, flags, and the method's ``-p`` parameter names).

The documents run in a temporary folder that holds small packaged data under the names the examples use
(:data:`FILES`); LLM examples reach a loopback server that stands in for ``http://localhost:8000/v1``.
"""

from __future__ import annotations

import doctest
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "fixtures"

#: file names the examples use -> the packaged data behind them
FILES = {
    "reviews.tsv": FIXTURES / "sentiment.tsv",
    "labelled.tsv": FIXTURES / "sentiment.tsv",
    "snli.tsv": FIXTURES / "nli.tsv",
    "pairs.tsv": FIXTURES / "pairs.tsv",
}

#: the server the LLM examples name, replaced by the loopback server's address
EXAMPLE_BASE_URL = "http://localhost:8000/v1"

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip\b(?P<reason>.*?)-->\s*$")
_OUTPUT = re.compile(r"^\s*<!--\s*docs-test:\s*output\s*-->\s*$")
SHELLS = {"bash", "sh", "console", "shell"}


@dataclass
class Block:
    doc: str
    line: int
    lang: str
    code: str
    skip: str | None  # the reason, when the block is marked not to run
    output: bool = False  # a text block marked as the output of the shell block before it


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks_of(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of a markdown file (named relative to ``root``), with the skip mark on the line
    before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if not indent or lines[j][:indent].isspace() else lines[j].lstrip())
            j += 1
        prev = lines[i - 1] if i else ""
        skip = _SKIP.match(prev)
        out.append(Block(str(path.relative_to(root)), i + 1, m.group("lang").lower(), "\n".join(body),
                         skip.group("reason").strip() if skip else None, bool(_OUTPUT.match(prev))))
        i = j + 1
    return out


def commands(code: str) -> list[str]:
    """The shell commands of a block: continuations joined, prompts and comments dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        line = line.strip().removeprefix("$ ")
        if not line or line.startswith("#"):
            continue
        out.append(line)
    return out


def cfaug_argv(command: str) -> tuple[dict[str, str], list[str]] | None:
    """``(environment, argv)`` of a ``cfaug`` command (``VAR=value`` prefixes split off), or None for another
    program. A chain (``a && b``) is split by the caller."""
    words = shlex.split(command, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not words or words[0] != "cfaug":
        return None
    return env, words[1:]


def test_collector_reads_blocks_marks_and_commands(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("text\n\n```bash\n$ cfaug augment a.tsv \\\n    -o b.jsonl   # note\npip install x\n```\n\n"
                   "<!-- docs-test: skip needs a GPU -->\n```python\nfor x in y:\n    print(x)\n```\n\n"
                   "- item\n\n    ```text\n    shown\n    ```\n", encoding="utf-8")
    bash, py, text = blocks_of(doc, tmp_path)
    assert (bash.lang, bash.skip, py.skip, text.lang, text.code) == ("bash", None, "needs a GPU", "text", "shown")
    assert commands(bash.code) == ["cfaug augment a.tsv -o b.jsonl   # note", "pip install x"]
    assert py.code == "for x in y:\n    print(x)"  # a body keeps its indentation
    assert cfaug_argv(commands(bash.code)[0]) == ({}, ["augment", "a.tsv", "-o", "b.jsonl"])
    assert cfaug_argv("OPENAI_API_KEY=x cfaug methods") == ({"OPENAI_API_KEY": "x"}, ["methods"])
    assert cfaug_argv("pip install x") is None


# --------------------------------------------------------------------------------------------- running


def every_block() -> list[Block]:
    return [b for doc in documents() for b in blocks_of(doc)]


def test_every_block_names_its_language():
    """An untagged block would escape this test (a command in it never runs): ``text`` for shown output."""
    untagged = [f"{b.doc}:{b.line}" for b in every_block() if not b.lang]
    assert not untagged, f"fenced blocks without a language: {untagged}"


def test_every_skip_gives_a_reason():
    unexplained = [f"{b.doc}:{b.line}" for b in every_block() if b.skip is not None and not b.skip]
    assert not unexplained, f"skipped without a reason: {unexplained}"


@pytest.fixture(scope="module")
def shared_caches(tmp_path_factory) -> Path:
    """One model store and vote cache for every document: a model trained on the same data for one page's
    example is loaded by the next page's, as on a user's machine."""
    return tmp_path_factory.mktemp("docs-caches")


@pytest.fixture
def workdir(tmp_path, monkeypatch, isolated_llm_cache, shared_caches):
    for name, source in FILES.items():
        shutil.copyfile(source, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CFAUG_MODEL_STORE", str(shared_caches / "model-store"))
    monkeypatch.setenv("CFAUG_IMPORTANCE_CACHE", str(shared_caches / "importance-cache"))
    return tmp_path


#: opinion words the stand-in server flips (both ways): those of the packaged reviews
_OPINIONS = {"wonderful": "dreadful", "brilliant": "clumsy", "great": "poor", "excellent": "mediocre",
             "beautiful": "ugly", "superb": "shoddy", "charming": "tiresome", "loved": "hated", "moving": "flat",
             "clever": "silly", "enjoyable": "tiresome", "funny": "unfunny", "smart": "dim", "fun": "dull",
             "enjoyed": "disliked", "best": "worst", "fascinating": "boring", "boring": "gripping",
             "weak": "strong", "terrible": "splendid", "awful": "lovely", "dull": "lively", "hated": "adored",
             "tedious": "charming", "bad": "good", "stupid": "witty", "predictable": "surprising",
             "annoying": "pleasant", "poor": "fine", "messy": "tidy", "ugly": "pretty", "disliked": "liked",
             "worst": "finest", "worse": "better"}


def _packaged_texts() -> list[str]:
    """The texts of the packaged reviews the examples rewrite (:data:`FILES`)."""
    import csv

    texts = []
    for source in (FIXTURES / "sentiment.tsv", FIXTURES / "pairs.tsv"):
        with source.open(encoding="utf-8", newline="") as f:
            texts += [row["Text"] for row in csv.DictReader(f, delimiter="\t")]
    return texts


_TEXTS = _packaged_texts()


def stand_in_rewrite(text: str) -> str:
    """``text`` as the stand-in server rewrites it: its opinion words flipped; a text without one (an NLI
    premise) is negated after its first "is" or "are"."""
    def flip(m: re.Match[str]) -> str:
        word = _OPINIONS.get(m.group(0).lower())
        if word is None:
            return m.group(0)
        return word.capitalize() if m.group(0)[0].isupper() else word

    flipped = re.sub(r"[A-Za-z]+", flip, text)
    if flipped != text:
        return flipped
    negated = re.sub(r"\b(is|are)\b", r"\1 not", text, count=1)
    return negated if negated != text else "Not so: " + text


def fake_rewrite(body: dict, prompt: str) -> str:
    """A loopback answer for the LLM examples: the text the prompt asks to rewrite (the revised side of an
    NLI pair, else the last packaged review the prompt quotes) rewritten by :func:`stand_in_rewrite`, so
    that it reads as a rewrite of that text and differs from it."""
    side = re.search(r"revised (premise|hypothesis) only", prompt)
    quoted = re.findall(rf"^{side.group(1).capitalize()}: (.*)$", prompt, re.M) if side else []
    if not quoted:
        quoted = [t for _, t in sorted((prompt.rfind(t), t) for t in _TEXTS if t in prompt)]
    if not quoted:
        return "<revised>A different text, written by the stand-in server.</revised>"
    return f"<revised>{stand_in_rewrite(quoted[-1].strip())}</revised>"


def run_shell_block(block: Block, base_url: str) -> list[str]:
    """Runs the block's cfaug commands; returns those it ran."""
    from cfaug.cli import main

    ran = []
    for command in commands(block.code):
        for part in command.split("&&"):
            parsed = cfaug_argv(part.replace(EXAMPLE_BASE_URL, base_url))
            if parsed is None:
                continue
            env, argv = parsed
            if argv[:2] == ["review", "serve"]:
                continue
            with pytest.MonkeyPatch.context() as mp:  # a VAR=value prefix holds for its command only
                for key, value in env.items():
                    mp.setenv(key, value)
                code = main(argv + (["--no-progress"] if argv and argv[0] == "augment" else []))
            assert code == 0, f"{block.doc}:{block.line}: `{part.strip()}` exited {code}"
            ran.append(part.strip())
    return ran


def run_python_block(block: Block, namespace: dict) -> None:
    """Runs a python block in ``namespace``; one with ``>>>`` prompts as a doctest (ELLIPSIS and
    NORMALIZE_WHITESPACE on), whose shown output must match."""
    if ">>>" not in block.code:
        exec(compile(block.code, f"{block.doc}:{block.line}", "exec"), namespace)
        return
    test = doctest.DocTestParser().get_doctest(block.code, namespace, f"{block.doc}:{block.line}",
                                               block.doc, block.line)
    said: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=said.append, clear_globs=False)
    namespace.update(test.globs)  # names defined here are there for the page's next blocks, as in a session
    assert not runner.failures, "".join(said)


def check_shown_output(block: Block, printed: str) -> None:
    """Every line of a block marked ``<!-- docs-test: output -->`` must be a line the shell block before it
    printed (stdout or stderr, runs of spaces as one); a line ending in ``...`` matches any line that starts
    with what comes before (for times and sizes that differ from run to run)."""

    def norm(line: str) -> str:
        return " ".join(line.split())

    said = [norm(line) for line in printed.splitlines()]
    for line in block.code.splitlines():
        want = norm(line)
        if not want:
            continue
        if want.endswith("..."):
            ok = any(have.startswith(want[:-3].rstrip()) for have in said)
        else:
            ok = want in said
        assert ok, f"{block.doc}:{block.line}: the shown output line {line.strip()!r} is not what the command printed"


def runnable(path: Path) -> list[Block]:
    return [b for b in blocks_of(path)
            if b.skip is None and (b.lang == "python" or b.lang in SHELLS or b.output)]


@pytest.mark.parametrize("doc", [str(p.relative_to(ROOT)) for p in documents() if runnable(p)])
def test_examples_run(doc, workdir, fake_llm, capsys):
    namespace: dict = {"__name__": "__docs__"}
    printed = ""
    with fake_llm.FakeLLM(default_reply=fake_rewrite) as server:
        for block in runnable(ROOT / doc):
            if block.output:
                check_shown_output(block, printed)
                continue
            capsys.readouterr()
            if block.lang == "python":
                run_python_block(block, namespace)
            else:
                run_shell_block(block, server.base_url)
            captured = capsys.readouterr()
            printed = captured.out + captured.err


def test_shown_output_is_compared_line_by_line():
    block = Block("d.md", 1, "text", "rows read   40\ntime   ...\n", None, True)
    check_shown_output(block, "x\nrows read              40\ntime                   7.8 s (peak 500 MB)\n")
    with pytest.raises(AssertionError, match="rows read 41"):
        check_shown_output(Block("d.md", 1, "text", "rows read 41", None, True), "rows read 40")


def skipped_commands() -> list[tuple[Block, list[str]]]:
    """The ``cfaug`` commands of every skipped shell block, as argument lists."""
    out = []
    for block in every_block():
        if block.skip is None or block.lang not in SHELLS:
            continue
        for command in commands(block.code):
            for part in command.split("&&"):
                parsed = cfaug_argv(part)
                if parsed is not None:
                    out.append((block, parsed[1]))
    return out


def test_commands_that_do_not_run_here_still_parse():
    """A command shown but not run (it needs a real LLM, a GPU, data) must still be one cfaug accepts: its
    command and flags parse, and each ``-p KEY=VALUE`` of augment or train names a parameter of its method."""
    import dataclasses

    from cfaug.cli import build_parser
    from cfaug.methods import METHODS

    parser = build_parser()
    found = skipped_commands()
    assert len(found) > 20  # the check sees the shown commands
    for block, argv in found:
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{block.doc}:{block.line}: `cfaug {' '.join(argv)}` does not parse", pytrace=False)
        if args.command in ("augment", "train"):
            method = getattr(args, "method", None) or "auto-cad"
            fields = {f.name for f in dataclasses.fields(METHODS.get(method).Config)}
            for pair in getattr(args, "param", []) or []:
                key = pair.split("=", 1)[0]
                assert key in fields, f"{block.doc}:{block.line}: {method} has no parameter {key!r}"


def test_the_scripts_the_docs_name_exist():
    """``python bench/x.py`` and ``tools/...py`` named anywhere in the docs are files of the repository (a
    name in capitals, ``bench/SCRIPT.py``, is a placeholder)."""
    named = {m for doc in documents() for m in re.findall(r"\b((?:bench|tools)/[\w/]+\.py)\b",
                                                          doc.read_text(encoding="utf-8"))}
    assert len(named) > 10
    missing = sorted(n for n in named if not (ROOT / n).is_file() and not re.search(r"/[A-Z_]+\.py$", n))
    assert not missing, f"scripts named in the docs that do not exist: {missing}"


def test_the_guide_runs_its_main_examples():
    """The pages a newcomer starts from keep runnable examples (a page whose every block is skipped would
    pass the test above by running nothing)."""
    for doc in ("README.md", "docs/getting-started.md", "docs/concepts.md", "docs/methods/auto-cad.md",
                "docs/methods/coba.md", "docs/methods/compare-generate.md", "docs/evaluation.md"):
        assert runnable(ROOT / doc), doc
