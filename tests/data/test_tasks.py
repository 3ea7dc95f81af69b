import pytest

from cfaug.data.labels import LabelError
from cfaug.data.records import Record
from cfaug.data.tasks import NLITask, RatingTask, SentimentTask, TaskError, make_task


def rec(label, **fields):
    return Record(id="1", fields=fields or {"text": "x"}, label=label)


def test_sentiment_flips_to_the_other_label():
    task = SentimentTask()
    assert task.targets(rec("positive")) == ["negative"]
    assert task.targets(rec("negative")) == ["positive"]
    assert task.roles == task.edit_roles == ("text",)


def test_a_named_target_skips_records_that_already_have_it():
    task = make_task("sentiment", target="pos")
    assert task.targets(rec("negative")) == ["positive"]
    assert task.targets(rec("positive")) == []


@pytest.mark.parametrize("label,expected", [("1", ["5"]), ("2", ["4"]), ("4", ["2"]), ("5", ["1"]),
                                            ("3", ["1", "5"])])
def test_rating_opposite_mirrors_the_scale(label, expected):
    assert RatingTask().targets(rec(label)) == expected


def test_rating_to_a_chosen_target_and_custom_levels():
    task = make_task("rating", target="2", levels=("1", "2", "3"))
    assert task.targets(rec("3")) == ["2"] and task.targets(rec("2")) == []
    assert task.label_space.canonical("2.0") == "2"
    assert task.describe_label("2") == "2 out of 3"


def test_nli_edits_the_chosen_side_and_targets_every_other_relation():
    task = make_task("nli", edit_side="hypothesis")
    assert task.roles == ("premise", "hypothesis") and task.edit_roles == ("hypothesis",)
    assert task.targets(rec("neutral", premise="p", hypothesis="h")) == ["entailment", "contradiction"]
    assert make_task("nli", target="contradiction").targets(rec("entailment")) == ["contradiction"]


def test_nli_rejects_an_unknown_side():
    with pytest.raises(TaskError, match="edit side"):
        NLITask(edit_side="both")


def test_make_task_errors():
    with pytest.raises(TaskError, match="unknown task 'topic'"):
        make_task("topic")
    with pytest.raises(LabelError, match="unknown label 'neutral'"):
        make_task("sentiment", target="neutral")
