"""Figures the documentation quotes from benchmark results must still be in those results files.

README.md, docs/*.md and bench/README.md are read as units: a paragraph, a list item or a table row. A unit
*cites* the results files it names (``bench/coba.results.md``, a link to it, or its bare name in
bench/README.md) and those of the bench scripts it names (``python bench/coba.py``: the results files
bench/README.md lists for that script). A unit that names none takes the files cited anywhere in its
section (the text under its nearest heading). Every decimal figure of a cited unit (``72.6``, ``0.23``,
``99.8%``) and every whole percentage (``60%``) must then occur in one of those files, exactly or as a
rounding of a more precise figure there (``71.87`` is quoted as ``71.9``, ``60.4%`` as ``60%``, an edit
rate of ``0.046`` as ``4.6%``; a whole percentage is not taken as a rounding of a figure written without
``%``); the sign does not count (``-2.2 points`` is quoted as a drop of 2.2). Two derived kinds are found
too: the mean of the out-of-domain columns of a row of a ``cfaug downstream`` table (the "out-of-domain
mean" the docs quote), and a fraction quoted as a percentage.

Not checked: whole numbers other than percentages (counts, sizes, years), code (fenced blocks and inline
code, where parameters are written), ``key=value`` settings, link targets and version numbers.

A figure of a cited unit that is not read from the cited files (a parameter written in prose, a figure of
the paper, a measurement of an earlier run kept for comparison, a difference worked out in the text) is
listed in :data:`NOT_FROM_RESULTS` with a quote of the words around it and the reason; a figure worked out
from results (minutes from seconds, a ratio) also with the figures it comes from, which must stay in the
cited files. A quote that no longer occurs in a cited unit of its document, or that covers no figure, fails
the test too, so the list cannot keep an exemption for text that is gone.

After rerunning a benchmark, run this file: it names every quoted figure the new results no longer hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]


def documents(root: Path) -> list[str]:
    """The checked documents, relative to the repository root."""
    return ["README.md", *sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*.md")),
            "bench/README.md"]


class NotFromResults(NamedTuple):
    """Figures of a cited unit that are not read from its results files.

    Every figure inside ``quote`` (verbatim text of one unit of ``doc``; runs of whitespace and line breaks
    count as one space) is exempt. ``needs``: for a figure worked out from results (minutes from seconds,
    a ratio), the figures it is worked out from; they must still be in the unit's cited files, so that a
    rerun that changes them fails here too.
    """

    doc: str
    quote: str
    reason: str
    needs: tuple[str, ...] = ()


NOT_FROM_RESULTS: list[NotFromResults] = [
    # docs/evaluation.md
    NotFromResults("docs/evaluation.md", "by 0.00035 and 0.00021 on average and at most 0.0034 and 0.0020",
                   "per-pair differences between two runs' metric files; the results file gives the means"),
    # docs/fidelity.md
    NotFromResults("docs/fidelity.md", "1.5 points more on the other domains",
                   "the difference of the two out-of-domain means it follows", ("72.7", "71.2")),
    NotFromResults("docs/fidelity.md", "keeps 95% of the human pairs",
                   "the threshold is the 5th percentile rounded up", ("0.4390",)),
    NotFromResults("docs/fidelity.md", "lambda_KL 0.01, GAE 0.95 / 0.99", "the paper's settings"),
    NotFromResults("docs/fidelity.md", "the worked SNLI example's values (0.333, 0.111)",
                   "the paper's worked example (its table shares a unit with rows citing bench/llm_local.results.md)"),
    NotFromResults("docs/fidelity.md", "came back negative 3% of the time (56% with these settings)",
                   "reconstruction checks made when the summarizer's KL setting was chosen, not a bench result"),
    # docs/llm.md
    NotFromResults("docs/llm.md", "chat template | Apache-2.0 |", "a licence's name, not a measurement"),
    # docs/nlp.md
    NotFromResults("docs/nlp.md", "against 94.6", "the replaced lemmatizer, measured when it was replaced"),
    NotFromResults("docs/nlp.md", "against 95.9", "the replaced lemmatizer, measured when it was replaced"),
    NotFromResults("docs/nlp.md", "about 4% of the pipeline's time in a profile, against 9%",
                   "a profile made when the lemmatizer was replaced"),
    NotFromResults("docs/nlp.md", "reached dev LAS 79.0", "dev scores of trial trainings by tools/nlp/build.py"),
    NotFromResults("docs/nlp.md", "the shipped model's best is 78.9", "the shipped model's dev score at training"),
    NotFromResults("docs/nlp.md", "about 20% faster and ended at dev LAS 77.9",
                   "dev scores and timing of a trial training by tools/nlp/build.py"),
    # docs/strategies.md
    NotFromResults("docs/strategies.md", "about 4.5 times the input tokens",
                   "few-shot's 1,256 input tokens per IMDB item against zero-shot's 277", ("1256", "277")),
    NotFromResults("docs/strategies.md", "costs about 70% of `opro`'s requests",
                   "requests per item, 11.6 against 16.3 (IMDB) and 15.8 against 22.6 (SNLI)",
                   ("11.6", "16.3", "15.8", "22.6")),
]


# --------------------------------------------------------------------------------------------- reading


@dataclass
class Unit:
    doc: str
    line: int
    text: str
    section: int
    cites: set[str] = field(default_factory=set)


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_TABLE = re.compile(r"^\s*\|")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


def units_of(text: str, doc: str) -> list[Unit]:
    """Paragraphs, list items and table rows of a markdown text, outside fenced code, with their section
    (a counter of the headings above them)."""
    units: list[Unit] = []
    current: Unit | None = None
    section = 0
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_code = not in_code
            current = None
            continue
        if in_code:
            continue
        if not line.strip():
            current = None
        elif _HEADING.match(line):
            section += 1
            current = None
        elif _TABLE.match(line):
            current = None
            if not _TABLE_RULE.match(line):
                units.append(Unit(doc, number, line.strip(), section))
        elif _ITEM.match(line) or current is None:
            current = Unit(doc, number, line.strip(), section)
            units.append(current)
        else:
            current.text += " " + line.strip()
    return units


def results_files(root: Path) -> set[str]:
    """Names of the benchmark results files: every markdown file in bench/ but its README."""
    return {p.name for p in (root / "bench").glob("*.md") if p.name != "README.md"}


def script_results(root: Path) -> dict[str, set[str]]:
    """bench/README.md's table: script name -> the results files listed for it."""
    known = results_files(root)
    out: dict[str, set[str]] = {}
    for line in (root / "bench" / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`\w+\.py`", cells[0]):
            out[cells[0].strip("`")] = set(re.findall(r"[\w.]+\.md", cells[-1])) & known
    return out


_CITED_FILE = re.compile(r"(?<![\w/.])(?:\.\./)*(?:bench/)?([\w.]+\.md)\b")
_CITED_SCRIPT = re.compile(r"(?<![\w/.])bench/(\w+\.py)\b")
_BARE_SCRIPT = re.compile(r"(?<![\w/.])`(\w+\.py)`")


def cited(unit: Unit, known: set[str], scripts: dict[str, set[str]]) -> set[str]:
    """The results files a unit names, directly or through a bench script (bench/README.md names its
    scripts without the folder)."""
    names = {m for m in _CITED_FILE.findall(unit.text) if m in known}
    script_names = set(_CITED_SCRIPT.findall(unit.text))
    if unit.doc == "bench/README.md":
        script_names |= set(_BARE_SCRIPT.findall(unit.text))
    for script in script_names:
        names |= scripts.get(script, set())
    return names


def cited_units(root: Path) -> list[Unit]:
    """Every unit of the checked documents that cites a results file, itself or through its section."""
    known, scripts = results_files(root), script_results(root)
    out: list[Unit] = []
    for doc in documents(root):
        units = units_of((root / doc).read_text(encoding="utf-8"), doc)
        by_section: dict[int, set[str]] = {}
        for unit in units:
            unit.cites = cited(unit, known, scripts)
            by_section.setdefault(unit.section, set()).update(unit.cites)
        for unit in units:
            unit.cites = unit.cites or by_section[unit.section]
            if unit.cites:
                out.append(unit)
    return out


# --------------------------------------------------------------------------------------------- figures

_CODE = re.compile(r"`[^`]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_SETTING = re.compile(r"[\w.-]+=\S+")
_VERSION = re.compile(r"\d+(?:\.\d+){2,}")
#: a decimal figure, or a whole number directly followed by a percent sign; not part of a longer token
_FIGURE = re.compile(r"(?<![\w.,/])[-+\u2212]?(\d+\.\d+%?|\d+%)(?![\w]|\.\d)")
#: a number of a results file; one glued to the letters before it is part of a name ("glibc2.36", "x86_64")
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:,\d{3})*(?:\.\d+)?%?")


def masked(text: str) -> str:
    """``text`` with what is never checked blanked out (same length, so positions stay)."""
    for pattern in (_CODE, _LINK_TARGET, _SETTING, _VERSION):
        text = pattern.sub(lambda m: " " * len(m.group()), text)
    return text


def figures(text: str) -> list[tuple[int, int, str]]:
    """(start, end, figure) of each checked figure in a unit's text; the figure without its sign."""
    return [(m.start(1), m.end(1), m.group(1)) for m in _FIGURE.finditer(masked(text))]


def numbers_in(text: str) -> set[str]:
    """Every number written in a results file (commas and signs dropped; a percentage both with and
    without its ``%``), and the out-of-domain mean of each row of its downstream tables."""
    numbers = {n.replace(",", "") for n in _NUMBER.findall(text)}
    return numbers | {n.rstrip("%") for n in numbers} | out_of_domain_means(text)


def out_of_domain_means(text: str) -> set[str]:
    """The mean over the ``out-of-domain`` columns of each row of every table with two or more such
    columns (``cfaug downstream`` tables list SST-2, Yelp and Amazon but not always their mean, which the
    docs quote), with three decimals so that any rounding of it is found."""
    means: set[str] = set()
    columns: list[int] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        if _TABLE_RULE.match(line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if columns is None:  # the header row
            columns = [i for i, c in enumerate(cells) if "out-of-domain" in c]
            continue
        if len(columns) < 2:
            continue
        try:
            values = [Decimal(cells[i]) for i in columns]
        except (IndexError, ArithmeticError):
            continue
        means.add(str((sum(values) / len(values)).quantize(Decimal("0.001"))))
    return means


def found(figure: str, pool: set[str]) -> bool:
    """Whether ``figure`` (``72.6``, ``99.8%``, ``60%``) is in ``pool``, exactly or as a rounding of a more
    precise number there; a percentage also as a rounding of a fraction (an edit rate of ``0.046`` is
    quoted as ``4.6%``). A whole number without ``%`` must be in the pool as written."""
    value = figure.rstrip("%")
    if "." in value:
        if value in pool:
            return True
    elif figure == value:  # a whole number (only in ``needs``)
        return value in pool
    elif figure in pool or f"{value}.0" in pool:
        return True
    places = len(value.split(".")[1]) if "." in value else 0
    target = Decimal(value)
    quantum = Decimal(1).scaleb(-places)
    whole_percentage = places == 0
    for number in pool:
        if "." not in number:
            continue
        percentage, number = number.endswith("%"), number.rstrip("%")
        decimals = len(number.split(".")[1])
        candidates = []
        # a whole percentage rounds a figure written as a percentage (60.4%), not any decimal of the file
        if decimals > places and (percentage or not whole_percentage):
            candidates.append(Decimal(number))
        if figure.endswith("%") and not percentage and number.startswith("0.") and decimals > places + 1:
            candidates.append(Decimal(number) * 100)
        for exact in candidates:
            if target in (exact.quantize(quantum, ROUND_HALF_UP), exact.quantize(quantum, ROUND_HALF_EVEN)):
                return True
    return False


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@dataclass
class Finding:
    unit: Unit
    figure: str
    start: int

    def __str__(self) -> str:
        text = _squash(self.unit.text)
        excerpt = text[max(0, self.start - 60): self.start + 40]
        return (f"{self.unit.doc}:{self.unit.line}: {self.figure} not in {', '.join(sorted(self.unit.cites))}"
                f"  ...{excerpt}...")


def check(root: Path = ROOT, exempt: list[NotFromResults] = NOT_FROM_RESULTS) -> tuple[list[Finding], list[str]]:
    """(figures missing from their results files, problems with the exemptions: entries that cover no
    figure of a cited unit, or whose ``needs`` are no longer in the cited files)."""
    pools = {name: numbers_in((root / "bench" / name).read_text(encoding="utf-8")) for name in results_files(root)}
    used: set[int] = set()
    problems: list[str] = []
    missing: list[Finding] = []
    for unit in cited_units(root):
        text = _squash(unit.text)
        pool = set().union(*(pools[name] for name in unit.cites))
        spans: list[tuple[int, int, int]] = []
        for index, entry in enumerate(exempt):
            if entry.doc != unit.doc:
                continue
            for m in re.finditer(re.escape(_squash(entry.quote)), text):
                spans.append((m.start(), m.end(), index))
                problems += [f"{entry.doc}:{unit.line}: {need} (needed for {entry.quote!r}) is no longer in "
                             f"{', '.join(sorted(unit.cites))}" for need in entry.needs if not found(need, pool)]
        for start, end, figure in figures(text):
            hits = [i for s, e, i in spans if s <= start and end <= e]
            if hits:
                used.update(hits)
            elif not found(figure, pool):
                missing.append(Finding(unit, figure, start))
    problems += [f"{entry.doc}: {entry.quote!r} ({entry.reason}) covers no figure of a cited unit"
                 for i, entry in enumerate(exempt) if i not in used]
    return missing, problems


# --------------------------------------------------------------------------------------------- tests


def test_quoted_figures_are_in_the_results_files_they_cite():
    missing, _ = check()
    if missing:
        pytest.fail("figures the docs quote that their cited results files do not hold (fix the text to the "
                    "results file, or list a figure that is not from it in NOT_FROM_RESULTS with the reason):\n"
                    + "\n".join(map(str, missing)), pytrace=False)


def test_every_exemption_still_holds():
    _, problems = check()
    if problems:
        pytest.fail("NOT_FROM_RESULTS is out of date:\n" + "\n".join(problems), pytrace=False)


def test_links_to_bench_files_resolve():
    broken = []
    for doc in documents(ROOT):
        base = (ROOT / doc).parent
        for target in re.findall(r"\]\(([^)#\s]+\.md)\)", (ROOT / doc).read_text(encoding="utf-8")):
            if ("bench/" in target or doc.startswith("bench/")) and not (base / target).is_file():
                broken.append(f"{doc}: {target}")
    assert not broken, broken


def test_the_check_sees_the_documents_that_quote_results():
    units = cited_units(ROOT)
    docs = {u.doc for u in units}
    assert {"docs/fidelity.md", "docs/evaluation.md", "bench/README.md", "docs/methods/auto-cad.md",
            "docs/methods/coba.md", "docs/methods/lass.md", "docs/methods/t2s.md",
            "docs/methods/compare-generate.md"} <= docs
    fidelity = {name for u in units if u.doc == "docs/fidelity.md" for name in u.cites}
    assert {"coba.results.md", "downstream_cad_imdb.md", "auto_cad_dev.results.md"} <= fidelity
    scripts = script_results(ROOT)
    assert "coba.results.md" in scripts["coba.py"] and "downstream_cad_imdb.md" in scripts["downstream_cad_imdb.py"]
    assert sum(len(figures(_squash(u.text))) for u in units) > 300


def test_matching_rules():
    pool = numbers_in("| a | 71.87 | 74.0 | 0.299 | 60.4% | -2.2 points | 0.046 | 1,256 | up to 20% | 33.4 |")
    for figure in ("71.9", "74.0", "0.30", "60%", "60.4%", "2.2", "4.6%", "5%", "1256", "20%", "71.87", "33.4%"):
        assert found(figure, pool), figure
    for figure in ("72.6", "0.23", "61%", "74.1", "3%", "1.3", "256", "33%"):
        assert not found(figure, pool), figure
    table = ("| data | in-domain | sst2 (out-of-domain, 10) | yelp (out-of-domain, 10) | amazon (out-of-domain, 10) |\n"
             "|---|---|---|---|---|\n| original | 85.7 | 71.9 | 84.2 | 62.1 |\n")
    assert found("72.7", numbers_in(table)) and not found("72.8", numbers_in(table))
    machine = numbers_in("Machine: Linux-6.18.44-x86_64-with-glibc2.36, 2 CPU cores, Python 3.11.7")
    assert not found("2.4", machine) and not found("2.36", machine)  # a name's digits are no figure
    text = ("mean 72.6 (`-p min_target_prob=0.9`, min_moverscore=0.55, [x](bench/a.results.md)), 99.8%, "
            "Python 3.11.7, 2e-5, v1.2x, 1,707 reviews, a 4-star film, 10% of 200")
    assert [f for _, _, f in figures(text)] == ["72.6", "99.8%", "10%"]


def _tree(tmp_path: Path, doc: str, results: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "README.md").write_text(doc, encoding="utf-8")
    (tmp_path / "bench" / "README.md").write_text(
        "| script | what | results |\n|---|---|---|\n| `toy.py` | a toy | `toy.results.md` |\n", encoding="utf-8")
    (tmp_path / "bench" / "toy.results.md").write_text(results, encoding="utf-8")
    return tmp_path


def test_a_rerun_that_changes_a_quoted_figure_fails(tmp_path: Path):
    doc = ("# Toy\n\nIntro with no citation: 3.5 apples.\n\n## Measured\n\n"
           "With `python bench/toy.py`: accuracy 85.7 against 83.2, edit rate 4.6%, 12 runs.\n\n"
           "Another paragraph of the same section: mean 0.30, earlier run 70.4.\n")
    root = _tree(tmp_path, doc, "| run | acc | edit |\n|---|---|---|\n| a | 85.7 | 0.046 |\n| b | 83.2 | 0.050 |\n"
                                "ratio 0.299\n")
    exempt = [NotFromResults("README.md", "earlier run 70.4", "an earlier run")]
    assert check(root, exempt) == ([], [])
    # the bench is rerun: its figures move, the doc is left as it was
    (root / "bench" / "toy.results.md").write_text(
        "| run | acc | edit |\n|---|---|---|\n| a | 86.1 | 0.046 |\n| b | 83.2 | 0.050 |\nratio 0.251\n",
        encoding="utf-8")
    missing, problems = check(root, exempt)
    assert sorted(f.figure for f in missing) == ["0.30", "85.7"] and problems == []
    # an exemption for text that is gone, or whose inputs left the results, is reported
    gone = [NotFromResults("README.md", "earlier run 70.4", "an earlier run"),
            NotFromResults("README.md", "no such words 1.0", "gone"),
            NotFromResults("README.md", "mean 0.30", "derived", ("0.299",))]
    _, problems = check(root, gone)
    assert len(problems) == 2 and "no such words" in problems[1] and "0.299" in problems[0]
