"""docs/development.md quotes no size or duration of the test suite that no command measured: such figures go
stale with every test added. A paragraph or list item that states one (``2,000 tests``, ``about twelve
minutes``) must say how it was measured (the word "measured" and the command, in inline code)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "development.md"

NUMBER = r"(?:\d[\d,.]*|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
#: a count of tests, or a duration
FIGURE = re.compile(rf"\b\d[\d,]*\s+tests\b|\b{NUMBER}\s+(?:minutes?|seconds?|hours?)\b", re.IGNORECASE)


def units(text: str) -> list[str]:
    """The paragraphs and list items of a markdown text, fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        out += [u for u in re.split(r"\n(?=\s*(?:[-*]|\d+\.)\s)", block) if u.strip()]
    return out


def unmeasured_figures(text: str) -> list[str]:
    """The figures of ``text`` that stand in a unit saying nothing of how they were measured."""
    found = []
    for unit in units(text):
        if "measured" in unit and "`" in unit:
            continue
        found += [m.group(0) for m in FIGURE.finditer(unit)]
    return found


def test_the_rule_finds_hand_written_figures():
    assert unmeasured_figures("- the suite (1,993 tests) takes about twelve minutes\n") == ["1,993 tests",
                                                                                           "twelve minutes"]
    assert unmeasured_figures("The slowest run (about a minute each).\n") == ["a minute"]
    assert unmeasured_figures("2,146 tests in 9.5 minutes, measured with `python -m pytest`.\n") == []
    assert unmeasured_figures("```bash\npython -m pytest  # 3 minutes\n```\n") == []


def test_development_md_states_no_hand_written_suite_figures():
    assert unmeasured_figures(DOC.read_text(encoding="utf-8")) == []
