"""The loop's label judge: the LLM itself, or a local classifier (no request)."""

from __future__ import annotations

import pytest

from cfaug.data.tasks import make_task
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
from cfaug.llm.errors import ParseError
from cfaug.llm.parsers import get_parser
from cfaug.config import ConfigError
from cfaug.methods.compare_generate.judges import LocalJudge, build_judge

STYLE_TRAIN = [("gonna be late lol", "informal"), ("u coming 2nite?", "informal"), ("thx, ur the best", "informal"),
               ("I will arrive later than planned.", "formal"), ("Will you attend this evening?", "formal"),
               ("Thank you for your assistance.", "formal")]


def test_tfidf_judge_is_trained_on_the_named_data(tmp_path):
    data = tmp_path / "nli.tsv"
    rows = [("A dog runs.", "An animal moves.", "entailment"), ("A dog sleeps.", "The dog runs.", "contradiction"),
            ("A dog runs.", "The dog is happy.", "neutral")] * 3
    data.write_text("premise\thypothesis\tlabel\n" + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    judge = build_judge("tfidf", None, make_task("nli"), data=str(data))  # type: ignore[arg-type]
    assert isinstance(judge, LocalJudge) and judge.kind == "local"
    described = judge.describe()
    assert described["train_rows"] == 9 and described["train_data"] == str(data) and described["judge"] == "tfidf-logreg"
    assert judge.predict({"premise": "A dog sleeps.", "hypothesis": "The dog runs."}, "contradiction").label == \
        "contradiction"


def test_local_style_score_is_on_the_one_to_five_scale():
    task = make_task("style")
    clf = TfidfLinearJudge().fit([t for t, _ in STYLE_TRAIN], [lab for _, lab in STYLE_TRAIN])
    judge = LocalJudge(clf, task, {})
    informal = judge.predict({"text": "lol gonna be late, thx"}, "informal").style
    formal = judge.predict({"text": "lol gonna be late, thx"}, "formal").style
    assert 1.0 <= formal < 3.0 < informal <= 5.0
    assert informal + formal == pytest.approx(6.0)  # 1 + 4p and 1 + 4(1 - p)


def test_hf_judge_by_local_path(tiny_classifier_dir):
    judge = build_judge("hf", None, make_task("sentiment"), model=str(tiny_classifier_dir))  # type: ignore[arg-type]
    assert judge.predict({"text": "a great film"}, "negative").label in ("negative", "positive")
    assert judge.describe()["path"] == str(tiny_classifier_dir)
    with pytest.raises(ConfigError, match=r"output 'joy' is not a label of the task \(negative, positive\)"):
        build_judge("hf", None, make_task("sentiment"), model=str(tiny_classifier_dir), labels="joy,anger")  # type: ignore[arg-type]
    # spellings of the task's labels map onto them
    spelled = build_judge("hf", None, make_task("sentiment"), model=str(tiny_classifier_dir), labels="pos,neg")  # type: ignore[arg-type]
    assert spelled.describe()["labels"] == ["positive", "negative"]


def test_judge_parameters_are_checked(tmp_path):
    task = make_task("sentiment")
    with pytest.raises(ConfigError, match="judge must be one of tfidf, hf, llm or a judge spec, got 'svm'"):
        build_judge("svm", None, task)  # type: ignore[arg-type]
    # without judge_data, negative/positive texts get the shipped general sentiment classifier; other tasks must name data
    general = build_judge("tfidf", None, task)  # type: ignore[arg-type]
    assert general.info == {"train_data": "general (shipped sample)"} and set(general.classifier.labels) == \
        {"negative", "positive"}
    with pytest.raises(ConfigError, match="judge=tfidf needs judge_data=PATH"):
        build_judge("tfidf", None, make_task("nli"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="judge=hf needs judge_model=PATH"):
        build_judge("hf", None, task)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="judge_model: classifier 'org/model' is not a local folder"):
        build_judge("hf", None, task, model="org/model")  # type: ignore[arg-type]
    one = tmp_path / "one.tsv"
    one.write_text("text\tlabel\nfine\tpositive\ngood\tpositive\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="needs at least two labels"):
        build_judge("tfidf", None, task, data=str(one))  # type: ignore[arg-type]


def test_score_parser_reads_a_number_in_range():
    parse = get_parser("score")
    assert parse("4") == 4.0 and parse("<score>2.5</score>") == 2.5 and parse("Formal style score: 5") == 5.0
    assert parse("I would give it 3/5.") == 3.0 and parse("2 out of 5") == 2.0
    with pytest.raises(ParseError, match="outside 1 to 5"):
        parse("7")
    with pytest.raises(ParseError, match="several numbers"):
        parse("between 2 and 3")
    with pytest.raises(ParseError, match="no number"):
        parse("quite formal")
    assert "between <score> and </score>" in parse.reminder()
