import json

from cfaug.data.contract import counterfactual_row, output_columns, record_from_row
from cfaug.data.records import Counterfactual, Record
from cfaug.data.schema import Schema
from cfaug.data.tasks import make_task


def sentiment_case():
    task = make_task("sentiment")
    task.label_space.read("Positive")  # as read from the input: sets the surface form
    schema = Schema(text_cols={"text": "Text"}, label_col="Sentiment", id_col="id")
    src = Record(id="r1", fields={"text": "A great film."}, label="positive", meta={"split": "train"})
    cf = Counterfactual(src, {"text": "A terrible film."}, "negative", "auto-cad.v1",
                        {"edits": [{"start": 2, "end": 7, "old": "great", "new": "terrible"}], "passed": True})
    return task, schema, cf


def test_sentiment_row():
    task, schema, cf = sentiment_case()
    row = counterfactual_row(cf, schema, task)
    assert row == {"Text": "A terrible film.", "Sentiment": "Negative", "source_id": "r1",
                   "original_Text": "A great film.", "original_Sentiment": "Positive", "method": "auto-cad.v1",
                   "split": "train", "meta": cf.meta}
    assert list(row) == output_columns(schema, ["split"])


def test_target_label_is_spelled_as_in_the_input():
    task, schema, cf = sentiment_case()
    task.label_space.read("neg")
    assert counterfactual_row(cf, schema, task)["Sentiment"] == "neg"


def test_nli_row_has_both_text_columns_and_their_originals():
    task = make_task("nli", edit_side="hypothesis")
    schema = Schema(text_cols={"premise": "sentence1", "hypothesis": "sentence2"}, label_col="gold_label")
    src = Record(id="4", fields={"premise": "A dog runs.", "hypothesis": "An animal moves."}, label="entailment")
    cf = Counterfactual(src, {"premise": "A dog runs.", "hypothesis": "An animal sleeps."}, "contradiction", "m.v1")
    row = counterfactual_row(cf, schema, task)
    assert list(row) == output_columns(schema, []) == [
        "sentence1", "sentence2", "gold_label", "source_id", "original_sentence1", "original_sentence2",
        "original_gold_label", "method", "meta"]
    assert (row["sentence2"], row["original_sentence2"], row["gold_label"]) == (
        "An animal sleeps.", "An animal moves.", "contradiction")


def test_unlabelled_source_and_default_label_column():
    task = make_task("sentiment")
    schema = Schema(text_cols={"text": "text"})
    src = Record(id="1", fields={"text": "ok"}, label=None)
    row = counterfactual_row(Counterfactual(src, {"text": "bad"}, "negative", "m.v1"), schema, task)
    assert row["label"] == "negative" and row["original_label"] is None


def test_output_columns_append_extra_columns_once():
    schema = Schema(text_cols={"text": "Text"}, label_col="Sentiment")
    assert output_columns(schema, ["split", "method", "Text"]) == [
        "Text", "Sentiment", "source_id", "original_Text", "original_Sentiment", "method", "split", "meta"]


def test_record_from_row_reads_jsonl_and_flat_rows_back():
    task, schema, cf = sentiment_case()
    row = counterfactual_row(cf, schema, task)
    for r in (row, {**row, "meta": json.dumps(row["meta"])}):  # JSONL keeps objects, CSV a JSON string
        src, back = record_from_row(r, schema, make_task("sentiment"))
        assert (src.id, src.fields, src.label) == ("r1", {"text": "A great film."}, "positive")
        assert (back.fields, back.target, back.method, back.meta) == (cf.fields, "negative", "auto-cad.v1", cf.meta)
