import pytest

from cfaug.data.schema import Schema, SchemaError
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
    with pytest.raises(SchemaError, match=r"^in.csv: no label column; pass --label-col \(columns: text\)$"):
        Schema().resolve(["text"], make_task("sentiment"), "in.csv")


def test_mapped_columns_must_exist():
    with pytest.raises(SchemaError, match=r"in.csv: missing column\(s\) body, key"):
        Schema(text_cols={"text": "body"}, id_col="key").resolve(["text", "label"], make_task("sentiment"), "in.csv")
