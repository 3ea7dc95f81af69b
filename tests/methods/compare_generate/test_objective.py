"""The objective: alignment + alpha * relevance (minimised), or style + alpha * similarity (maximised)."""

from __future__ import annotations

import pytest

from cfaug.data.tasks import make_task
from cfaug.config import ConfigError
from cfaug.methods.compare_generate.objective import Judgement, Objective

ORIGINAL = "A person riding a bicycle down a red ramp."


def score(obj: Objective, text: str, judgement: Judgement, target: str = "contradiction", index: int = 0):
    return obj.candidate(text, ORIGINAL, judgement, target, step=0, index=index)


def test_loss_for_a_label_flip_with_token_distance():
    obj = Objective(make_task("nli"))
    walked = score(obj, "A person walking slowly down a red ramp.", Judgement(label="contradiction"))
    # tokens: a person riding a bicycle down a red ramp . -> 3 edits of 10 tokens
    assert walked.relevance == pytest.approx(0.3) and walked.alignment == 0.0 and walked.aligned
    assert walked.score == pytest.approx(0.03)
    blue = score(obj, "A person riding a blue bicycle down a red ramp.", Judgement(label="entailment"), index=1)
    assert blue.relevance == pytest.approx(0.1) and blue.alignment == 1.0 and not blue.aligned
    assert blue.score == pytest.approx(1.01)
    assert obj.better(walked, blue) and not obj.better(blue, walked)
    assert obj.verdict(blue, walked) == "2" and obj.verdict(walked, blue) == "1"
    assert obj.best([blue, walked]) is walked


def test_character_distance_and_alpha():
    obj = Objective(make_task("sentiment"), alpha=0.5, relevance="char")
    c = obj.candidate("A bad film.", "A good film.", Judgement(label="negative"), "negative", step=0, index=0)
    assert c.relevance == pytest.approx(3 / 12) and c.score == pytest.approx(0.5 * 3 / 12)  # good -> bad: 3 edits
    assert "character-level edit distance" in obj.relevance_note()


def test_equal_scores_are_no_improvement_and_name_the_verdict():
    obj = Objective(make_task("sentiment"))
    a = obj.candidate("A fine film.", "A great film.", Judgement(label="positive"), "negative", step=0, index=0)
    b = obj.candidate("A nice film.", "A great film.", Judgement(label="positive"), "negative", step=0, index=1)
    assert a.score == b.score and not obj.better(b, a) and obj.best([a, b]) is a
    assert obj.verdict(a, b) == "equally bad"
    c = obj.candidate("A dull film.", "A great film.", Judgement(label="negative"), "negative", step=1, index=2)
    d = obj.candidate("A poor film.", "A great film.", Judgement(label="negative"), "negative", step=1, index=3)
    assert obj.verdict(c, d) == "equally good"
    # two failures with different losses: the paper still names the better one
    e = obj.candidate("A nice film!", "A great film.", Judgement(label="positive"), "negative", step=1, index=4)
    assert obj.verdict(a, e) == "1"


def test_a_judge_failure_gets_the_worst_alignment():
    obj = Objective(make_task("sentiment"))
    c = obj.candidate("A dull film.", "A great film.", Judgement(error="no answer"), "negative", step=0, index=0)
    assert c.alignment == 1.0 and not c.aligned and c.to_meta()["judge_error"] == "no answer"
    style = Objective(make_task("style"), relevance="token")
    s = style.candidate("gonna go", "I am going to go.", Judgement(error="no answer"), "informal", step=0, index=0)
    assert s.alignment == 1.0 and not s.aligned


def test_style_is_maximised(sentence_encoder):
    obj = Objective(make_task("style"), encoder=sentence_encoder)
    assert obj.maximise and obj.kind == "embedding"
    original = "I am unable to attend the meeting."
    close = obj.candidate("cant make the meeting", original, Judgement(style=4.0), "informal", step=0, index=0)
    far = obj.candidate("lol whatever", original, Judgement(style=4.0), "informal", step=0, index=1)
    weak = obj.candidate("I cannot attend the meeting.", original, Judgement(style=2.0), "informal", step=0, index=2)
    assert far.relevance < 0.5 < close.relevance <= 1
    assert close.score == pytest.approx(4.0 + 0.1 * close.relevance)
    assert close.aligned and not weak.aligned
    assert obj.better(close, far) and obj.better(far, weak) and obj.best([weak, far, close]) is close
    assert obj.verdict(weak, close) == "2"
    token = Objective(make_task("style"), relevance="token")
    same = token.candidate(original, original, Judgement(style=1.0), "informal", step=0, index=0)
    assert same.relevance == 1.0 and "one minus the word-level" in token.relevance_note()


def test_parameters_are_checked():
    with pytest.raises(ConfigError, match="relevance must be one of auto, token, char, embedding"):
        Objective(make_task("sentiment"), relevance="bleu")
    with pytest.raises(ConfigError, match="alpha must be 0 or more"):
        Objective(make_task("sentiment"), alpha=-1)
    with pytest.raises(ConfigError, match="style_threshold must be within 1 to 5"):
        Objective(make_task("style"), relevance="token", style_threshold=7)


def test_view_rounds_for_prompts():
    obj = Objective(make_task("sentiment"))
    c = obj.candidate("A dull film, sadly.", "A great film.", Judgement(label="negative"), "negative", step=2, index=3)
    assert c.view() == {"text": "A dull film, sadly.", "alignment": 0, "relevance": 0.75, "score": 0.075,
                        "aligned": True, "step": 2}
