"""Background training data for label judges (:func:`cfaug.judges.builtin.background_records`)."""

import csv

import pytest

from cfaug.config import ConfigError
from cfaug.data.tasks import make_task
from cfaug.judges.builtin import background_records, general_background_path
from cfaug.judges.registry import JudgeContext


def test_the_general_sample_is_balanced_and_named_in_the_facts():
    records, facts = background_records("general", JudgeContext(make_task("sentiment")))
    assert len(records) == facts["background_rows"] == 20000
    assert sum(r.label == "negative" for r in records) == 10000
    assert facts["background"] == "general" and facts["background_sha256"].startswith("sha256:")
    with open(str(general_background_path()), encoding="utf-8", newline="") as fh:
        sources = {row["source"] for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)}
    assert sources == {"yelp", "sst2"}


def test_none_adds_nothing_and_other_label_spaces_skip_the_general_sample():
    assert background_records("none", JudgeContext(make_task("sentiment"))) == ([], {})
    assert background_records(None, JudgeContext(make_task("sentiment"))) == ([], {})
    records, facts = background_records("general", JudgeContext(make_task("nli")))
    assert records == [] and "binary sentiment" in facts["background_skipped"]


def test_a_file_is_read_as_judge_training_data(tmp_path):
    path = tmp_path / "bg.tsv"
    path.write_text("label\ttext\npositive\ta lovely film\nnegative\ta dull film\nbogus\tno such label\n")
    records, facts = background_records(str(path), JudgeContext(make_task("sentiment")))
    assert [r.label for r in records] == ["positive", "negative"]  # the bad row is rejected, not fatal
    assert facts["background_rows"] == 2
    one = tmp_path / "one.tsv"
    one.write_text("label\ttext\npositive\ta lovely film\n")
    with pytest.raises(ConfigError, match="one.tsv: a classifier needs at least two labels"):
        background_records(str(one), JudgeContext(make_task("sentiment")))
