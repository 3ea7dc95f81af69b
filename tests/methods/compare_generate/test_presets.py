"""The ``paper`` preset of the Compare&Generate family, and the default preset left as it was."""

from __future__ import annotations

import dataclasses
import json
import os
import re

import pytest

from cfaug.config import ConfigError
from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.nlp.tokens import token_edit_rate
from cfaug.llm.errors import ParseError
from cfaug.llm.templates import PROMPTS
from cfaug.methods import METHODS, build_method
from cfaug.demonstrations import DemoPool, load_demos
from cfaug.llm.parsers import get_parser

COUNT = get_parser("count")
from cfaug.methods.compare_generate.objective import Judgement, Objective
from cfaug.methods.compare_generate.opro import solutions
from cfaug.methods.strategy import COUNT_VARIANTS, PAPER_VARIANTS

GOLDEN = "default_prompts.json"

#: (method, task, data) the default prompts are pinned for
CASES = [
    ("few-shot", "sentiment", [{"id": "s", "text": "A great film with a warm heart.", "label": "positive"}]),
    ("cot", "sentiment", [{"id": "s", "text": "A great film with a warm heart.", "label": "positive"}]),
    ("self-refine", "sentiment", [{"id": "s", "text": "A great film with a warm heart.", "label": "positive"}]),
    ("opro", "sentiment", [{"id": "s", "text": "A great film with a warm heart.", "label": "positive"}]),
    ("compare-generate", "sentiment", [{"id": "s", "text": "A great film with a warm heart.", "label": "positive"}]),
    ("few-shot", "nli", [{"id": "n", "premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.",
                          "label": "entailment"}]),
    ("cot", "nli", [{"id": "n", "premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.",
                     "label": "entailment"}]),
    ("self-refine", "nli", [{"id": "n", "premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.",
                             "label": "entailment"}]),
    ("compare-generate", "nli", [{"id": "n", "premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.",
                                  "label": "entailment"}]),
    ("self-refine", "style", [{"id": "f", "text": "I regret that I cannot attend the meeting.", "label": "formal"}]),
    ("compare-generate", "style", [{"id": "f", "text": "I regret that I cannot attend the meeting.",
                                    "label": "formal"}]),
    ("opro", "style", [{"id": "f", "text": "I regret that I cannot attend the meeting.", "label": "formal"}]),
]


#: the style case's text: its prompts are told apart by it (the sentiment prompts speak of "style" too)
STYLE_TEXT = "I regret that I cannot attend the meeting."


def golden_model(scripted):
    def judge(prompt: str) -> str:
        if "Relation:" in prompt:
            return "contradiction" if "asleep" in prompt.rsplit("Premise:", 1)[-1] else "entailment"
        if "style score" in prompt:
            return "4" if "cant" in prompt.rsplit("Text:", 1)[-1] else "2"
        return "negative" if "dull" in prompt.rsplit("Text:", 1)[-1] else "positive"

    def revision(prompt: str) -> str:
        if "Hypothesis:" in prompt:
            return "Reasoning.\n<revised>A man is asleep on a sofa.</revised>"
        if STYLE_TEXT in prompt:
            return "Reasoning.\n<revised>cant make the meeting, sorry</revised>"
        return "Reasoning.\n<revised>A dull film with a cold heart.</revised>"

    first = {"sentiment": "<revised>A fine film with a warm heart.</revised>",
             "nli": "<revised>A man is sitting on a sofa.</revised>",
             "style": "<revised>I cannot attend the meeting, sorry.</revised>"}

    def few_shot(prompt: str) -> str:
        task = "nli" if "Hypothesis:" in prompt else "style" if STYLE_TEXT in prompt else "sentiment"
        return first[task]

    return scripted(**{"few-shot": few_shot, "cot": revision, "feedback": ["It still reads the old way."],
                       "refine": revision, "judge": judge, "compare": revision, "opro": revision})


def rendered_prompts(serve, scripted, run_method, explicit: bool = False) -> dict[str, dict[str, list[str]]]:
    """The prompts each case sends, by kind; ``explicit``: with the default preset named and the new
    parameters set to their default values."""
    out = {}
    for method, task, data in CASES:
        model = golden_model(scripted)
        srv = serve(model)
        extra = {"patience": 2} if method == "compare-generate" else {"steps": 2} if method == "opro" else \
            {"rounds": 2} if method == "self-refine" else {}
        if explicit:
            extra.update(preset="default", prompt_set="default", demo_group=False, n_demos=2)
            if method in ("opro", "compare-generate"):
                extra.update(ties="earliest", style_score="scale", require_alignment=True)
        run_method(method, data, srv, task=task, **extra)
        out[f"{method}/{task}"] = {k: sorted(v) for k, v in model.asked.items()}
    return out


@pytest.mark.parametrize("explicit", [False, True], ids=["implicit", "explicit"])
def test_default_prompts_render_as_before(serve, scripted, run_method, fixtures, explicit):
    """Every prompt the strategies send with their default parameters is byte for byte the one recorded
    before the presets were added (fixtures/default_prompts.json, see fixtures/SOURCE.md), whether the
    defaults are left unset or named."""
    got = rendered_prompts(serve, scripted, run_method, explicit)
    path = fixtures / GOLDEN
    if os.environ.get("CFAUG_WRITE_GOLDEN") and not explicit:
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert got == json.loads(path.read_text(encoding="utf-8"))


# -- the presets ---------------------------------------------------------------------------------------

LLM = {"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "test-model"}}
FAMILY = ("few-shot", "cot", "self-refine", "opro", "compare-generate")
REVIEW = [{"id": "r", "text": "A great film with a warm heart.", "label": "positive"}]
PAIR = [{"id": "p", "premise": "A man is reading on a sofa.", "hypothesis": "A man is awake.", "label": "entailment"}]
FORMAL = [{"id": "f", "text": "I regret that I cannot attend the meeting.", "label": "formal"}]
#: the lines of cfaug's own Self-Refine prompts that keep a revision small (absent from the paper's prompts)
MINIMAL_EDIT = ("as few words as possible", "as little as possible", "not needed", "length", "keeping its meaning",
                "meaning that was lost")

#: every parameter default of the family as it was before the presets (the default preset must not move)
DEFAULTS = {
    "demos": None, "demos_revised": None, "demo_selection": "auto", "n_demos": None, "encoder": None,
    "prompt": None, "temperature": 0.0, "max_tokens": None, "parse_retries": 2,
}
SEARCH_DEFAULTS = {"judge": "llm", "judge_data": None, "judge_model": None, "judge_labels": None, "alpha": 0.1,
                   "relevance": "auto", "style_threshold": 4.0, "init_temperature": 0.7, "require_alignment": True}
OWN_DEFAULTS = {"few-shot": {"samples": None, "sample_temperature": 0.5}, "cot": {}, "self-refine": {"rounds": 4}, "opro": {"steps": 10, "history": 20},
                "compare-generate": {"max_steps": 10, "patience": 5}}
NEW_DEFAULTS = {"prompt_set": "auto", "demo_group": False, "length_retry_max_tokens": 8192,
                "untagged_min_length": 0.5, "untagged_max_length": 2.0, "untagged_min_overlap": None,
                "flip_check": "auto", "flip_check_data": None, "flip_check_model": None, "flip_check_labels": None,
                "flip_check_min_prob": 0.5, "completeness": True, "keep": 1, "item_time_limit": None,
                "avoid_source_words": "auto"}
NEW_SEARCH_DEFAULTS = {"ties": "earliest", "style_score": "scale", "max_unreadable": 3}

PAPER = {"n_demos": 1, "demo_group": True, "prompt_set": "paper", "flip_check": "none", "avoid_source_words": "off"}
PAPER_SEARCH = {**PAPER, "alpha": 0.1, "require_alignment": False, "ties": "latest", "style_score": "count"}
PAPER_VALUES = {"few-shot": {**PAPER, "samples": 1}, "cot": PAPER, "self-refine": {**PAPER, "rounds": 4},
                "opro": {**PAPER_SEARCH, "steps": 10},
                "compare-generate": {**PAPER_SEARCH, "max_steps": 10, "patience": 5}}


def values(method) -> dict:
    return {k: v for k, v in dataclasses.asdict(method.config).items() if k != "llm"}


@pytest.mark.parametrize("name", FAMILY)
def test_default_values_are_unchanged_and_the_default_preset_is_the_config_defaults(name):
    search = name in ("opro", "compare-generate")
    expected = {**DEFAULTS, **(SEARCH_DEFAULTS if search else {}), **OWN_DEFAULTS[name], **NEW_DEFAULTS,
                **(NEW_SEARCH_DEFAULTS if search else {})}
    plain = build_method(name, LLM)
    assert values(plain) == expected
    assert values(build_method(name, LLM, preset="default")) == expected


@pytest.mark.parametrize("name", FAMILY)
def test_paper_preset_values_and_user_values_over_them(name):
    cls = METHODS.get(name)
    assert set(cls.presets) - {"small"} == {"paper"} and cls.presets["paper"].description
    paper = values(build_method(name, LLM, preset="paper"))
    assert {k: paper[k] for k in PAPER_VALUES[name]} == PAPER_VALUES[name]
    changed = {k for k, v in paper.items() if v != values(build_method(name, LLM))[k]}
    assert changed <= set(PAPER_VALUES[name])
    assert build_method(name, {**LLM, "n_demos": 3}, preset="paper").config.n_demos == 3  # -p wins


SMALL = {"prompt_set": "small", "n_demos": 6, "demo_selection": "ordered"}
SMALL_VALUES = {"few-shot": SMALL, "self-refine": SMALL, "opro": {**SMALL, "judge": "tfidf"},
                "compare-generate": {**SMALL, "judge": "tfidf"}}


@pytest.mark.parametrize("name", list(SMALL_VALUES))
def test_small_preset_values(name):
    cls = METHODS.get(name)
    assert "small" in cls.presets and cls.presets["small"].description
    small = values(build_method(name, LLM, preset="small"))
    assert {k: small[k] for k in SMALL_VALUES[name]} == SMALL_VALUES[name]
    changed = {k for k, v in small.items() if v != values(build_method(name, LLM))[k]}
    assert changed <= set(SMALL_VALUES[name])


def test_every_prompt_of_a_set_exists_for_every_task():
    names = {e.name for e in PROMPTS.entries()}
    for prefix in PAPER_VARIANTS:
        for task in ("sentiment", "nli", "style"):
            assert f"{prefix}-{task}-paper.v1" in names and f"{prefix}-{task}.v1" in names
    for prefix in COUNT_VARIANTS:
        assert f"{prefix}-style-count.v1" in names and f"{prefix}-style.v1" in names


def test_parameter_checks():
    with pytest.raises(ConfigError, match="demo_group needs prompt_set=paper"):
        build_method("few-shot", {**LLM, "demo_group": True})
    with pytest.raises(ConfigError, match="prompt_set of cot.v1: 'best' is not one of auto, default, paper"):
        build_method("cot", {**LLM, "prompt_set": "best"})
    with pytest.raises(ConfigError, match="ties of opro.v1: 'first' is not one of earliest, latest"):
        build_method("opro", {**LLM, "ties": "first"})
    with pytest.raises(ConfigError, match="style_score of compare-generate.v1: 'likert' is not one of scale, count"):
        build_method("compare-generate", {**LLM, "style_score": "likert"})


# -- Self-Refine: no minimal-edit instructions -----------------------------------------------------------

#: per task, a first rewrite of its text and a refined one (each must read as a rewrite of the text)
REWRITES = {"sentiment": ("A fine film with a warm heart.", "A dull film with a cold heart."),
            "nli": ("A man is sitting on a sofa.", "A man is asleep on a sofa."),
            "style": ("I cannot attend the meeting, sorry.", "cant make the meeting, sorry")}


@pytest.mark.parametrize("task, data", [("sentiment", REVIEW), ("nli", PAIR), ("style", FORMAL)])
def test_self_refine_paper_prompts_drop_the_minimal_edit_lines(serve, scripted, run_method, task, data):
    first, refined = REWRITES[task]

    def asked(preset):
        model = scripted(**{"few-shot": [f"<revised>{first}</revised>"], "feedback": ["It is not clear."],
                            "refine": [f"<revised>{refined}</revised>"]})
        srv = serve(model)
        _, rows, _ = run_method("self-refine", data, srv, task=task, preset=preset, rounds=1)
        return model.asked, rows[0]["meta"]["llm"]["prompts"]

    default, default_names = asked(None)
    paper, paper_names = asked("paper")
    for kind in ("feedback", "refine"):
        assert any(line in default[kind][0] for line in MINIMAL_EDIT), kind
        assert not any(line in p for p in paper[kind] for line in MINIMAL_EDIT), paper[kind][0]
    assert f"self-refine-feedback-{task}-paper.v1" in paper_names and f"self-refine-{task}-paper.v1" in paper_names
    assert f"few-shot-{task}-paper.v1" in paper_names
    assert not any(n.endswith("-paper.v1") for n in default_names)
    assert "Give your feedback." in paper["feedback"][0] and "It is not clear." in paper["refine"][0]
    assert "very clear" in paper["refine"][0]


# -- few-shot and CoT: one sentiment demonstration, one NLI premise with two targets ---------------------

def demo_block(prompt: str) -> str:
    return prompt.split("Following the example", 1)[0]


@pytest.mark.parametrize("method", ["few-shot", "cot"])
def test_paper_sentiment_prompt_has_exactly_one_demonstration(serve, scripted, run_method, method, fixtures):
    answer = "Causal words: great\nReplacements: dull\n<revised>A dull film with a warm heart.</revised>"
    for demos in ({}, {"demos": str(fixtures / "imdb_paired.tsv")}):
        model = scripted(**{method: [answer]})
        srv = serve(model)
        _, rows, _ = run_method(method, REVIEW, srv, preset="paper", **demos)
        prompt = model.asked[method][0]
        block = demo_block(prompt)
        assert block.count("Example ") == 1 and "Example 1:" in block
        assert block.count("Text: ") == 1 and block.count("Target sentiment: ") == 1
        assert block.count("Current sentiment: positive\nTarget sentiment: negative") == 1  # same direction
        assert prompt.count("Revised text: <revised>") == 1
        assert (block.count("Causal words: ") == 1) == (method == "cot")
        assert len(rows[0]["meta"]["demos"]) == 1
    # the default prompt shows two demonstrations
    model = scripted(**{method: [answer]})
    srv = serve(model)
    run_method(method, REVIEW, srv)
    assert "Example 2" in model.asked[method][0] and "Following the example" not in model.asked[method][0]


@pytest.mark.parametrize("method", ["few-shot", "cot"])
@pytest.mark.parametrize("source", ["built-in", "cad-snli"])
def test_paper_nli_prompt_has_one_premise_with_two_targets(serve, scripted, run_method, fixtures, method, source):
    demos = {} if source == "built-in" else {"demos": str(fixtures / "snli_original.tsv"),
                                             "demos_revised": str(fixtures / "snli_revised_premise.tsv")}
    answer = "Causal words: reading\nReplacements: asleep\n<revised>A man is asleep on a sofa.</revised>"
    model = scripted(**{method: [answer]})
    srv = serve(model)
    _, rows, _ = run_method(method, PAIR, srv, task="nli", preset="paper", **demos)
    assert len(rows) == 2  # neutral and contradiction
    labels = {"entailment", "neutral", "contradiction"}
    for prompt in model.asked[method]:
        block = demo_block(prompt)
        assert block.count("Example ") == 1
        assert block.count("Premise: ") == 1 and block.count("Hypothesis: ") == 1
        current = re.findall(r"^Current relation: (\w+)$", block, re.M)
        targets = re.findall(r"^Target relation: (\w+)$", block, re.M)
        revised = re.findall(r"^Revised premise: <revised>(.*)</revised>$", block, re.M)
        assert len(current) == 1 and len(targets) == 2 and len(revised) == 2
        assert set(targets) == labels - set(current)  # the premise rewritten towards both other relations
        if source == "built-in":  # it has an original with the item's label rewritten towards both others
            assert current == ["entailment"]
        assert block.count("Causal words: ") == (2 if method == "cot" else 0)
        if source == "cad-snli":
            original = (fixtures / "snli_original.tsv").read_text(encoding="utf-8")
            premise = re.search(r"^Premise: (.*)$", block, re.M).group(1)
            revisions = (fixtures / "snli_revised_premise.tsv").read_text(encoding="utf-8")
            assert premise in original and all(r in revisions for r in revised)
    assert all(len(r["meta"]["demos"]) == 2 for r in rows)


def test_grouped_pool_prefers_originals_rewritten_towards_every_other_label(fixtures):
    task = make_task("nli", edit_side="premise")
    demos = load_demos(fixtures / "snli_original.tsv", task, fixtures / "snli_revised_premise.tsv")
    pool = DemoPool(demos, task, k=1, group=True)
    assert pool.describe() == {"source": "built-in", "count": 12, "per_item": 1, "selection": "seeded",
                               "grouped": True, "originals": 9}  # 3 originals with 2 rewrites, 6 reversed singles
    for label, target in (("neutral", "entailment"), ("entailment", "contradiction"), ("contradiction", "entailment")):
        item = WorkItem(Record("x", {"premise": "A dog runs.", "hypothesis": "An animal moves."}, label), target)
        for seed in range(5):
            [group] = pool.select_groups(item, seed)
            assert len(group) == 2 and len({tuple(sorted(d.fields.items())) for d in group}) == 1
            assert {d.target for d in group} == {"entailment", "contradiction"}  # CAD-SNLI originals are neutral
            assert [d.target for d in group] == sorted((d.target for d in group), key=task.label_space.labels.index)
    single = DemoPool(demos, task, k=2)
    item = WorkItem(Record("x", {"premise": "A dog runs.", "hypothesis": "An animal moves."}, "neutral"), "entailment")
    assert single.select_groups(item, 3) == [[d] for d in single.select(item, 3)]


# -- search strategies: unaligned results kept, ties to the latest ---------------------------------------

def revised(text: str) -> str:
    return f"Analysis.\n<revised>{text}</revised>"


def test_paper_preset_returns_the_best_candidate_even_when_it_is_not_aligned(serve, scripted, run_method):
    for method, loop in (("compare-generate", "compare"), ("opro", "opro")):
        model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>"], "judge": ["positive"],
                            loop: [revised("A nice film with a warm heart.")]})
        srv = serve(model)
        limit = {"patience": 1} if method == "compare-generate" else {"steps": 1}
        summary, rows, _ = run_method(method, REVIEW, srv, keep_failed=False, **limit)
        assert rows == [] and summary.candidates_filtered_out == 1  # default: dropped
        summary, rows, _ = run_method(method, REVIEW, srv, keep_failed=False, preset="paper", **limit)
        assert len(rows) == 1 and summary.candidates_filtered_out == 0
        meta = rows[0]["meta"]
        assert meta["passed"] and not meta["aligned"] and "aligned" not in meta["filters"]
        assert rows[0]["text"] == meta["trajectory"][meta["best"]]["text"]
        assert all(t["score"] >= meta["score"] for t in meta["trajectory"])  # the best of them


def test_ties_objective():
    task = make_task("sentiment")
    for ties, winner in (("earliest", 0), ("latest", 1)):
        obj = Objective(task, ties=ties)
        a = obj.candidate("A dull film.", "A great film.", Judgement(label="negative"), "negative", step=0, index=0)
        b = obj.candidate("A poor film.", "A great film.", Judgement(label="negative"), "negative", step=1, index=1)
        assert a.score == b.score
        assert obj.better(b, a) is (ties == "latest") and obj.better(a, b) is (ties == "earliest")
        assert obj.best([a, b]).index == winner and obj.best([b, a]).index == winner
        assert obj.verdict(a, b) == "equally good"  # the prompt still calls them equal
        worse = obj.candidate("A fine film.", "A great film.", Judgement(label="positive"), "negative", step=1, index=2)
        assert [c.index for c in solutions([a, b, worse], obj, 10)] == ([2, 1, 0] if ties == "earliest" else [2, 0, 1])
    assert "ties" not in Objective(task).describe() and Objective(task, ties="latest").describe()["ties"] == "latest"


def test_a_tie_makes_the_later_candidate_the_best_under_the_paper_preset(serve, scripted, run_method):
    def run(**options):
        model = scripted(**{"few-shot": ["<revised>A fine film with a warm heart.</revised>",
                                         "<revised>A dull film with a warm heart.</revised>"],
                            "judge": scripted.labels_by_words(("dull", "poor"), "negative", "positive"),
                            "compare": [revised("A poor film with a warm heart."),     # the same loss as "dull"
                                        revised("A great film with a warm heart!")]})  # worse
        srv = serve(model)
        _, rows, _ = run_method("compare-generate", REVIEW, srv, patience=1, **options)
        return rows[0], model

    row, model = run()
    assert row["text"] == "A dull film with a warm heart." and row["meta"]["stop"] == "patience"
    assert row["meta"]["steps"] == 1 and len(model.asked["compare"]) == 1  # the tie was no improvement
    row, model = run(preset="paper")
    meta = row["meta"]
    assert row["text"] == "A poor film with a warm heart." and meta["best_step"] == 1
    assert meta["steps"] == 2 and len(model.asked["compare"]) == 2  # the tie was an improvement
    assert meta["objective"]["ties"] == "latest"
    dull = next(t for t in meta["trajectory"] if t.get("text") == "A dull film with a warm heart.")
    assert dull["score"] == meta["score"]
    # the next comparison pairs the new best with the one it replaced
    second = model.asked["compare"][1]
    assert "A dull film with a warm heart." in second and "A poor film with a warm heart." in second
    row, _ = run(ties="latest")  # the parameter alone does it
    assert row["text"] == "A poor film with a warm heart."


# -- style: a count of style expressions + 0.1 x similarity ---------------------------------------------

def test_count_parser_reads_a_natural_number():
    assert COUNT("3") == 3 and COUNT("<count>0</count>") == 0 and COUNT("Informal expressions: 4") == 4
    assert COUNT("I count 2 informal expressions.") == 2 and COUNT("The count is 5 (gonna, lol, u, r, thx)") == 5
    assert COUNT("12.0") == 12
    for bad, why in (("2.5", "not a whole number"), ("-1", "not a whole number"), ("quite informal", "no number"),
                     ("between 2 and 3", "several numbers")):
        with pytest.raises(ParseError, match=why):
            COUNT(bad)
    assert "between <count> and </count>" in COUNT.reminder()


def test_count_objective_is_the_count_plus_alpha_times_similarity():
    obj = Objective(make_task("style"), relevance="token", style_score="count")
    original = "I am unable to attend the meeting."
    c = obj.candidate("I cant attend the meeting lol.", original, Judgement(style=3.0), "informal", step=0, index=0)
    assert c.alignment == 3.0 and c.relevance == pytest.approx(1 - token_edit_rate(original, c.text))
    assert c.score == pytest.approx(3.0 + 0.1 * c.relevance) and c.aligned
    none = obj.candidate(original, original, Judgement(style=0.0), "informal", step=0, index=1)
    assert none.score == pytest.approx(0.1) and not none.aligned  # no expression of the style: not aligned
    failed = obj.candidate(original, original, Judgement(error="no answer"), "informal", step=0, index=2)
    assert failed.alignment == 0.0 and not failed.aligned
    assert obj.maximise and obj.better(c, none)
    many = obj.candidate("cant go lol", original, Judgement(style=9.0), "informal", step=0, index=3)
    assert many.alignment == 9.0  # no upper bound, no threshold
    assert obj.describe() == {"direction": "maximise", "alpha": 0.1, "relevance": "token", "style_score": "count"}
    # the count ignores style_threshold (a 1-to-5 value) and the scale keeps it
    Objective(make_task("style"), relevance="token", style_score="count", style_threshold=9)
    with pytest.raises(ConfigError, match="style_threshold must be within 1 to 5"):
        Objective(make_task("style"), relevance="token", style_threshold=9)


def test_paper_preset_scores_style_by_counting(serve, scripted, run_method):
    counts = {"I cannot attend the meeting, sorry.": "0", "cant make the meeting, sorry": "2",
              "sorry, not gonna make the meeting lol": "<count>3</count>"}

    def judge(prompt: str) -> str:
        return counts.get(scripted.quoted(prompt), "1")

    model = scripted(**{"few-shot": ["<revised>I cannot attend the meeting, sorry.</revised>",
                                     "<revised>cant make the meeting, sorry</revised>"],
                        "judge": judge, "compare": [revised("sorry, not gonna make the meeting lol")]})
    srv = serve(model)
    _, rows, _ = run_method("compare-generate", FORMAL, srv, task="style", preset="paper", patience=1)
    meta = rows[0]["meta"]
    assert rows[0]["text"] == "sorry, not gonna make the meeting lol"
    assert meta["objective"] == {"direction": "maximise", "alpha": 0.1, "relevance": "embedding",
                                 "style_score": "count", "ties": "latest"}
    for t in meta["trajectory"]:
        assert t["alignment"] == float(re.sub(r"\D", "", counts[t["text"]]))
        assert t["score"] == pytest.approx(t["alignment"] + 0.1 * t["relevance"])
    assert meta["trajectory"][meta["best"]]["alignment"] == 3.0 and meta["aligned"]
    judge_prompt = model.asked["judge"][0]
    assert "Count the next text in the same way, for the informal style." in judge_prompt
    assert judge_prompt.rstrip().endswith("Informal expressions:")
    compare = model.asked["compare"][0]
    assert "Informal expressions: 0" in compare and "Informal expressions: 2" in compare
    assert "the number of informal expressions" in compare and "from 1" not in compare
    assert {"judge-style-count.v1", "compare-generate-style-count.v1"} <= set(meta["llm"]["prompts"])


def test_counting_needs_the_llm_judge(serve, scripted, run_method, tmp_path):
    train = tmp_path / "style.tsv"
    train.write_text("text\tlabel\ngonna go lol\tinformal\nI shall attend.\tformal\ncant wait\tinformal\n"
                     "We are grateful.\tformal\n", encoding="utf-8")
    srv = serve(scripted(**{"few-shot": ["<revised>cant go</revised>"]}))
    with pytest.raises(ConfigError, match="style_score=count needs judge=llm"):
        run_method("opro", FORMAL, srv, task="style", style_score="count", judge="tfidf", judge_data=str(train),
                   relevance="token")


def test_the_command_line_preset_reaches_the_strategy(serve, scripted, tmp_path):
    from cfaug.cli import main

    model = scripted(**{"few-shot": ["<revised>A dull film.</revised>"]})
    srv = serve(model)
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nA great film.\tpositive\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["augment", str(inp), "-o", str(out), "--method", "few-shot", "--preset", "paper", "--llm-base-url",
                 srv.base_url, "--llm-model", "m", "--no-progress", "--run-dir", str(tmp_path / "run")]) == 0
    prompt = model.asked["few-shot"][0]
    assert "Following the example, complete the next one." in prompt and demo_block(prompt).count("Example ") == 1
    row = json.loads(out.read_text().splitlines()[0])
    assert row["text"] == "A dull film." and row["meta"]["llm"]["prompts"] == ["few-shot-sentiment-paper.v1"]
