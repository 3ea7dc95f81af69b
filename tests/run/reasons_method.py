"""A test method whose reasons for "no counterfactual" differ only in a number or a quoted word, and data on
which 30 of 40 items get one: shared by the tests of grouped reasons in the run summary and in compare."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cfaug.data.records import Counterfactual, NoCounterfactual
from cfaug.methods.base import Method


@dataclass
class ReasonsConfig:
    pass


class Reasons(Method):
    """No counterfactual for texts that start with "plain" (a reason with the text's own probability) or
    "word" (a reason quoting a word); the others get "good" and "bad" swapped."""

    name = "reasons.v1"
    Config = ReasonsConfig
    supported_tasks = ("sentiment",)

    def generate(self, items, task):
        out = []
        for it in items:
            words = it.record.text().split()
            if words[0] == "plain":
                out.append(NoCounterfactual(f"the classifier gives the source label {float(words[1]):.2f} for the "
                                            "whole text"))
            elif words[0] == "word":
                out.append(NoCounterfactual(f"no replacement for '{words[1]}' in the lexicon"))
            else:
                swap = {"good": "bad", "bad": "good"}
                out.append([Counterfactual(it.record, {"text": " ".join(swap.get(w, w) for w in words)}, it.target,
                                           self.name, {"passed": True})])
        return out


def reviews_with_30_without(path: Path, extra_word: str = "") -> Path:
    """40 reviews: 24 that get a reason with a probability, 6 a reason quoting a word, 10 a counterfactual;
    ``extra_word`` goes before "film" in the first 24."""
    middle = f"{extra_word} " if extra_word else ""
    rows = [f"p{i}\tnegative\tplain {0.03 + i / 100:.2f} {middle}film" for i in range(24)]
    rows += [f"w{i}\tpositive\tword {w} film" for i, w in enumerate(["fine", "nice", "fine", "neat", "fun", "fine"])]
    rows += [f"g{i}\tpositive\ta good film {i}" for i in range(10)]
    path.write_text("id\tlabel\ttext\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path
