"""``cfaug prompts``: the listing's columns line up, and one template prints."""

import re

from cfaug.cli import main
from cfaug.llm.templates import PROMPTS


def test_listing_columns_line_up(capsys):
    assert main(["prompts"]) == 0
    lines = capsys.readouterr().out.splitlines()
    entries = PROMPTS.entries()
    assert len(lines) == len(entries)
    parser_cols, description_cols = set(), set()
    for line, entry in zip(lines, entries):
        assert line.startswith(entry.name + " ")
        parser_cols.add(line.index(" parser=") + 1)
        m = re.match(r"(\S+ +parser=\S+ +)", line)
        assert m and line[m.end():] == entry.description
        description_cols.add(m.end())
    # every name is followed by its parser and description in the same columns, however long the name
    assert len(parser_cols) == 1 and len(description_cols) == 1
    longest = max(len(e.name) for e in entries)
    assert parser_cols == {longest + 2}


def test_one_template_prints(capsys):
    name = PROMPTS.entries()[0].name
    assert main(["prompts", name]) == 0
    assert capsys.readouterr().out.startswith(f"# {name}  (")
