import pytest

from cfaug.data.schema import Schema, SchemaError, parse_label_map
from cfaug.data.tasks import make_task


def test_common_names_are_found():
    s = Schema().resolve(["Sentiment", "Text", "batch_id"], make_task("sentiment"), "f.tsv")
    assert s.text_cols == {"text": "Text"} and s.label_col == "Sentiment" and s.id_col is None


def test_nli_columns_in_the_snli_layout():
    s = Schema().resolve(["sentence1", "sentence2", "gold_label", "id"], make_task("nli"), "f.tsv")
    assert s.text_cols == {"premise": "sentence1", "hypothesis": "sentence2"}
    assert s.label_col == "gold_label" and s.id_col == "id"
    assert s.columns() == ["sentence1", "sentence2", "gold_label", "id"]


def test_explicit_mapping_wins_over_common_names():
    s = Schema(text_cols={"text": "body"}, label_col="y", id_col="key").resolve(
        ["text", "label", "body", "y", "key"], make_task("sentiment"), "f.csv")
    assert (s.text_cols, s.label_col, s.id_col) == ({"text": "body"}, "y", "key")


def test_no_text_column_names_the_file_the_flag_and_the_columns():
    with pytest.raises(SchemaError) as err:
        Schema().resolve(["body", "label"], make_task("sentiment"), "in.csv")
    assert str(err.value) == "in.csv: no column for the 'text' field; pass it with --text-col (columns: body, label)"
    with pytest.raises(SchemaError, match="--hypothesis-col"):
        Schema().resolve(["premise", "label"], make_task("nli"), "in.csv")


def test_no_label_column():
    with pytest.raises(SchemaError, match=r"^in.csv: no label column: .*columns: text\. Pass --label-col COLUMN"):
        Schema().resolve(["text"], make_task("sentiment"), "in.csv")


def test_a_star_count_is_not_guessed_as_a_sentiment_label():
    with pytest.raises(SchemaError) as err:
        Schema().resolve(["text", "stars"], make_task("sentiment"), "in.csv", sample_values={"stars": ["5", "1"]})
    msg = str(err.value)
    assert "columns: text, stars" in msg and "'stars': 5, 1" in msg and "--label-col" in msg and "--label-map" in msg
    # a rating task does read it as its label
    assert Schema().resolve(["text", "stars"], make_task("rating"), "in.csv").label_col == "stars"


def test_the_summary_names_the_columns_and_whether_the_label_was_guessed():
    found = Schema().resolve(["Text", "Sentiment"], make_task("sentiment"), "in.csv")
    assert found.describe() == "text=Text, label=Sentiment (found by its name), id=row numbers"
    given = Schema(label_col="y", label_map={"1": "negative"}).resolve(["text", "y", "id"], make_task("sentiment"), "f")
    assert given.describe() == "text=text, label=y mapped 1=negative, id=id"


def test_label_map_is_parsed_and_checked_against_the_task():
    task = make_task("sentiment")
    assert parse_label_map("1=negative, 2=Neg,5=positive", task) == {"1": "negative", "2": "negative", "5": "positive"}
    assert parse_label_map({"1": "negative"}, task) == {"1": "negative"}
    assert parse_label_map(None, task) == {}
    with pytest.raises(SchemaError, match="--label-map 3=meh: unknown label 'meh'"):
        parse_label_map("3=meh", task)
    with pytest.raises(SchemaError, match="VALUE=LABEL"):
        parse_label_map("1negative", task)


def test_mapped_columns_must_exist():
    with pytest.raises(SchemaError, match=r"in.csv: missing column\(s\) body, key"):
        Schema(text_cols={"text": "body"}, id_col="key").resolve(["text", "label"], make_task("sentiment"), "in.csv")
