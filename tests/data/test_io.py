import csv
import json

import datasets
import pandas as pd
import pytest

from cfaug.data.io import DataError, Reject, detect_format, read_dataset, write_rows
from cfaug.data.schema import Schema, SchemaError
from cfaug.data.tasks import make_task


def sentiment():
    return make_task("sentiment")


@pytest.fixture(scope="module")
def fixture_rows(sentiment_tsv):
    with open(sentiment_tsv, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def expected_records(rows):
    return [(r["id"], r["Text"], r["Sentiment"].lower()) for r in rows]


def as_tuples(ds):
    return [(r.id, r.text(), r.label) for r in ds.records]


# ------------------------------------------------------------------------------------------------ formats


@pytest.fixture(scope="module")
def every_format(tmp_path_factory, sentiment_tsv, fixture_rows):
    """The sentiment fixture written as CSV, JSONL, Parquet and a save_to_disk folder."""
    d = tmp_path_factory.mktemp("formats")
    df = pd.DataFrame(fixture_rows)
    df.to_csv(d / "s.csv", index=False)
    df.to_json(d / "s.jsonl", orient="records", lines=True)
    df.to_parquet(d / "s.parquet", index=False)
    datasets.Dataset.from_pandas(df).save_to_disk(str(d / "s_hf"))
    return {"tsv": sentiment_tsv, "csv": d / "s.csv", "jsonl": d / "s.jsonl", "parquet": d / "s.parquet",
            "hf": d / "s_hf"}


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl", "parquet", "hf"])
def test_every_file_format_reads_the_same_records(every_format, fixture_rows, fmt):
    path = every_format[fmt]
    assert detect_format(path) == fmt
    ds = read_dataset(path, sentiment())
    assert as_tuples(ds) == expected_records(fixture_rows)
    assert ds.rejects == [] and ds.rows_read == 40
    assert ds.schema == Schema(text_cols={"text": "Text"}, label_col="Sentiment", id_col="id")


@pytest.mark.parametrize("kind", ["dataset", "dataframe", "list"])
def test_in_memory_tables(fixture_rows, kind):
    table = {"dataset": lambda: datasets.Dataset.from_list(fixture_rows),
             "dataframe": lambda: pd.DataFrame(fixture_rows), "list": lambda: fixture_rows}[kind]()
    ds = read_dataset(table, sentiment())
    assert as_tuples(ds) == expected_records(fixture_rows)
    assert ds.source == f"<{kind}>"


def test_format_flag_overrides_the_name(tmp_path, sentiment_tsv):
    odd = tmp_path / "reviews.txt"
    odd.write_bytes(sentiment_tsv.read_bytes())
    with pytest.raises(DataError, match=r"reviews.txt: cannot tell the format from the name; pass --format"):
        read_dataset(odd, sentiment())
    assert len(read_dataset(odd, sentiment(), fmt="tsv").records) == 40
    with pytest.raises(DataError, match="unknown format 'xlsx'"):
        read_dataset(odd, sentiment(), fmt="xlsx")


@pytest.mark.parametrize("name,fmt", [("a.json", "jsonl"), ("a.ndjson", "jsonl"), ("a.pq", "parquet"),
                                      ("a.TSV", "tsv"), ("a.csv.gz.csv", "csv")])
def test_extensions(name, fmt):
    assert detect_format(name) == fmt


def test_column_mapping_extra_columns_and_meta(tmp_path):
    f = tmp_path / "in.csv"
    f.write_text("key,body,y,split\nk1,Great fun.,1,train\nk2,Dull.,0,test\n", encoding="utf-8")
    ds = read_dataset(f, sentiment(), Schema(text_cols={"text": "body"}, label_col="y", id_col="key"))
    assert as_tuples(ds) == [("k1", "Great fun.", "positive"), ("k2", "Dull.", "negative")]
    assert ds.extra_columns == ["split"]
    assert ds.records[0].meta == {"split": "train"}


def test_rows_are_numbered_when_there_is_no_id_column(tmp_path):
    f = tmp_path / "in.tsv"
    f.write_text("text\tlabel\nGood.\tpos\nBad.\tneg\n", encoding="utf-8")
    assert [r.id for r in read_dataset(f, sentiment()).records] == ["1", "2"]


def test_nli_records(nli_tsv):
    ds = read_dataset(nli_tsv, make_task("nli"))
    first = ds.records[0]
    assert first.fields == {"premise": "A man in a red coat is walking a dog in the park.",
                            "hypothesis": "A man is outside with a dog."}
    assert [r.label for r in ds.records] == ["entailment", "contradiction", "neutral"] * 2


def test_byte_order_mark_is_ignored(tmp_path):
    f = tmp_path / "bom.csv"
    f.write_bytes(b"\xef\xbb\xbftext,label\nGood.,1\n")
    assert as_tuples(read_dataset(f, sentiment())) == [("1", "Good.", "positive")]


# ------------------------------------------------------------------------------------------------ bad rows


@pytest.fixture
def bad_csv(tmp_path):
    big = "x" * 1_000_000
    f = tmp_path / "bad.csv"
    f.write_bytes(
        b"id,text,label\n"
        b'1,"A good film.",pos\n'                      # row 1: fine
        b'2,"   ",neg\n'                               # row 2: empty text
        b'3,"A fine film.",\n'                         # row 3: missing label
        b'4,"An odd film.",mixed\n'                    # row 4: unknown label
        b'5,"Caf\xe9 food was bad.",neg\n'             # row 5: Latin-1 byte, not UTF-8
        b'1,"Same id again.",pos\n'                    # row 6: duplicate id
        b'7,"Two lines,\nstill one good review.",pos\n'  # row 7: quoted newline (fine)
        b'8,"' + big.encode() + b'",neg\n'             # row 8: 1 MB text
        b"9,too,many,fields\n"                         # row 9: wrong field count
        b'10,"The last, bad one.",Negative\n'          # row 10: fine
    )
    return f


def test_bad_rows_are_rejected_with_file_row_and_problem(bad_csv):
    ds = read_dataset(bad_csv, sentiment())
    assert as_tuples(ds) == [("1", "A good film.", "positive"),
                             ("7", "Two lines,\nstill one good review.", "positive"),
                             ("10", "The last, bad one.", "negative")]
    problems = {r.row: r.problem for r in ds.rejects}
    assert problems == {
        2: "empty text in column 'text'",
        3: "missing label in column 'label'",
        4: "unknown label 'mixed'; expected one of negative, positive in column 'label'",
        5: "undecodable bytes (not UTF-8) in column 'text'",
        6: "duplicate id '1' (first seen in row 1)",
        8: "text in column 'text' has 1,000,000 characters, over the limit of 100,000 (--max-chars)",
        9: "has 4 fields but the header has 3",
    }
    assert all(r.source == str(bad_csv) for r in ds.rejects)
    assert ds.rejects[0].message() == f"{bad_csv}, row 2: empty text in column 'text'"
    assert ds.rows_read == 10


def test_rejects_keep_the_raw_row_as_json(bad_csv):
    by_row = {r.row: r for r in read_dataset(bad_csv, sentiment()).rejects}
    raw = json.loads(json.dumps(by_row[5].to_json()))["raw"]
    assert raw["text"] == "Caf\ufffd food was bad." and raw["label"] == "neg"


def test_the_length_limit_is_a_setting(bad_csv):
    ds = read_dataset(bad_csv, sentiment(), max_chars=2_000_000)
    assert "8" in [r.id for r in ds.records]


def test_bad_jsonl_lines(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"text": "Good.", "label": "pos"}\n'
                  b"{not json\n"
                  b"[1, 2]\n"
                  b'{"text": "Caf\xe9.", "label": "neg"}\n'
                  b"\n"
                  b'{"text": "Bad.", "label": 0}\n'
                  b'{"text": "No label."}\n'
                  b'{"text": null, "label": 1}\n')
    ds = read_dataset(f, sentiment())
    assert as_tuples(ds) == [("1", "Good.", "positive"), ("6", "Bad.", "negative")]
    problems = {r.row: r.problem for r in ds.rejects}
    assert problems[2].startswith("invalid JSON")
    assert problems[3] == "expected a JSON object, got list"
    assert problems[4].startswith("undecodable bytes (not UTF-8)")
    assert problems[7] == "missing label in column 'label'"
    assert problems[8] == "empty text in column 'text'"


def test_empty_id_is_rejected(tmp_path):
    f = tmp_path / "ids.csv"
    f.write_text("id,text,label\n,Good.,1\nb,Bad.,0\n", encoding="utf-8")
    ds = read_dataset(f, sentiment())
    assert [r.id for r in ds.records] == ["b"]
    assert ds.rejects[0].problem == "empty id in column 'id'"


# ------------------------------------------------------------------------------------------ whole-file errors


@pytest.mark.parametrize("name,content,message", [
    ("empty.csv", b"", "the file is empty"),
    ("blank.tsv", b"\n  \n", "the file is empty"),
    ("empty.jsonl", b"\n", "the file is empty"),
    ("header.csv", b"text,label\n", "no data rows"),
    ("nolabel.csv", b"text\nGood.\n", "no label column: no column is named like a label"),
    ("notext.jsonl", b'{"body": "Good.", "label": 1}\n', "no column for the 'text' field"),
])
def test_whole_file_problems_name_the_file(tmp_path, name, content, message):
    f = tmp_path / name
    f.write_bytes(content)
    with pytest.raises((DataError, SchemaError)) as err:
        read_dataset(f, sentiment())
    assert str(err.value).startswith(f"{f}: ") and message in str(err.value)


def test_missing_file_and_odd_folders(tmp_path):
    with pytest.raises(DataError, match="no such file or folder"):
        read_dataset(tmp_path / "nope.csv", sentiment())
    (tmp_path / "plain").mkdir()
    with pytest.raises(DataError, match="not a dataset saved with save_to_disk"):
        read_dataset(tmp_path / "plain", sentiment())
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list([{"text": "a", "label": 1}]),
                               "test": datasets.Dataset.from_list([{"text": "b", "label": 0}])})
    dd.save_to_disk(str(tmp_path / "splits"))
    with pytest.raises(DataError, match="holds several splits"):
        read_dataset(tmp_path / "splits", sentiment())


def test_empty_parquet(tmp_path):
    f = tmp_path / "e.parquet"
    pd.DataFrame({"text": [], "label": []}).to_parquet(f)
    with pytest.raises(DataError, match="has no rows"):
        read_dataset(f, sentiment())


# ------------------------------------------------------------------------------------------------ writing

ROWS = [
    {"Text": "A dull film, with\ta tab.", "Sentiment": "Negative", "source_id": "r1", "meta": {"passed": True, "edits": [{"old": "great", "new": "dull"}]}},
    {"Text": 'Quote " and\nnewline.', "Sentiment": "Positive", "source_id": "r2", "meta": {"passed": False}},
]
COLUMNS = ["Text", "Sentiment", "source_id", "meta"]


def read_back(path, fmt):
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if fmt in ("csv", "tsv"):
        with open(path, encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh, delimiter="," if fmt == "csv" else "\t"))
    if fmt == "parquet":
        return pd.read_parquet(path).to_dict(orient="records")
    return datasets.load_from_disk(str(path)).to_list()


@pytest.mark.parametrize("fmt,name", [("jsonl", "o.jsonl"), ("csv", "o.csv"), ("tsv", "o.tsv"),
                                      ("parquet", "o.parquet"), ("hf", "o_hf")])
def test_write_rows_round_trip(tmp_path, fmt, name):
    path = tmp_path / "sub" / name
    write_rows(ROWS, path, fmt if fmt == "hf" else None, columns=COLUMNS)
    back = read_back(path, fmt)
    assert [list(r) for r in back] == [COLUMNS, COLUMNS]
    for got, want in zip(back, ROWS):
        meta = got["meta"] if fmt == "jsonl" else json.loads(got["meta"])
        assert meta == want["meta"]
        assert {k: got[k] for k in COLUMNS[:3]} == {k: want[k] for k in COLUMNS[:3]}
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.parametrize("fmt,name", [("jsonl", "e.jsonl"), ("csv", "e.csv"), ("parquet", "e.parquet"),
                                      ("hf", "e_hf")])
def test_writing_no_rows_keeps_the_columns(tmp_path, fmt, name):
    path = tmp_path / name
    write_rows([], path, fmt if fmt == "hf" else None, columns=COLUMNS)
    if fmt == "jsonl":
        assert path.read_text() == ""
    elif fmt == "csv":
        assert path.read_text() == "Text,Sentiment,source_id,meta\n"
    elif fmt == "parquet":
        assert list(pd.read_parquet(path).columns) == COLUMNS
    else:
        assert datasets.load_from_disk(str(path)).column_names == COLUMNS


def test_output_without_a_known_extension_names_the_output_flag(tmp_path):
    with pytest.raises(DataError, match="pass --output-format"):
        write_rows(ROWS, tmp_path / "out.txt")


def test_reject_json():
    r = Reject("f.csv", 3, "empty text", {"text": ""})
    assert r.to_json() == {"source": "f.csv", "row": 3, "problem": "empty text", "raw": {"text": ""}}


# ------------------------------------------------------------------------------- stray and runaway quotes


def _fixture_table(sentiment_tsv):
    lines = sentiment_tsv.read_text(encoding="utf-8").splitlines()
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]


def _write_delimited(path, header, rows, delimiter):
    """Write rows as the file's author did: cells joined as they are, quoted only by hand."""
    path.write_text("\n".join(delimiter.join(r) for r in [header, *rows]) + "\n", encoding="utf-8")


@pytest.mark.parametrize("later", ["no later quote", "later quoted words", "later quoted field"])
def test_a_stray_quote_in_tsv_is_read_as_text_and_no_row_is_lost(tmp_path, sentiment_tsv, later):
    header, rows = _fixture_table(sentiment_tsv)
    rows[8][2] = '"' + rows[8][2]                               # row 9 (line 10): opening quote, never closed
    if later == "later quoted words":
        rows[19][2] = 'They said "no" to it. ' + rows[19][2]    # row 20: quotes inside the text
    elif later == "later quoted field":
        rows[24][2] = '"' + rows[24][2] + '"'                   # row 25: a properly quoted field
    f = tmp_path / "stray.tsv"
    _write_delimited(f, header, rows, "\t")
    ds = read_dataset(f, sentiment())
    assert ds.rows_read == 40 and ds.rejects == []
    assert len(ds.records) == 40
    by_id = {r.id: r.text() for r in ds.records}
    assert by_id["r09"] == rows[8][2]                           # the quote is kept: the text is what the file holds
    assert all(len(t) < 200 for t in by_id.values())            # nothing swallowed the rows after it


@pytest.mark.parametrize("later", ["no later quote", "later quoted field"])
def test_a_stray_quote_in_csv_rejects_that_row_with_its_line_and_reads_the_rest(tmp_path, sentiment_tsv, later):
    header, rows = _fixture_table(sentiment_tsv)
    rows = [[i, lab, text.replace(",", ";")] for i, lab, text in rows]
    rows[8][2] = '"' + rows[8][2]                               # row 9 (line 10)
    if later == "later quoted field":
        rows[24][2] = '"' + rows[24][2] + '"'
    f = tmp_path / "stray.csv"
    _write_delimited(f, header, rows, ",")
    ds = read_dataset(f, sentiment())
    assert ds.rows_read == 40
    assert len(ds.records) + len(ds.rejects) == 40
    assert [r.id for r in ds.records] == [r[0] for r in rows if r[0] != "r09"]
    assert all(len(r.text()) < 200 for r in ds.records)
    [bad] = ds.rejects
    assert bad.row == 9 and "line 10" in bad.problem and "quote" in bad.problem


@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_a_stray_quote_closed_by_a_later_stray_quote_does_not_swallow_the_rows_between(tmp_path, sentiment_tsv,
                                                                                          fmt):
    header, rows = _fixture_table(sentiment_tsv)
    rows = [[i, lab, text.replace(",", ";")] for i, lab, text in rows]
    rows[8][2] = '"' + rows[8][2]                               # row 9 (line 10): opening quote
    rows[11][2] = rows[11][2] + ' On a 12"'                     # row 12: a quote right before the line end
    f = tmp_path / f"two.{fmt}"
    _write_delimited(f, header, rows, "\t" if fmt == "tsv" else ",")
    ds = read_dataset(f, sentiment())
    assert ds.rows_read == 40 and len(ds.records) + len(ds.rejects) == 40
    by_id = {r.id: r.text() for r in ds.records}
    assert by_id["r12"] == rows[11][2] and by_id["r10"] == rows[9][2]
    assert all("\n" not in t for t in by_id.values())
    if fmt == "tsv":
        assert by_id["r09"] == rows[8][2]
    else:
        assert [(r.row, "line 10" in r.problem) for r in ds.rejects] == [(9, True)]


def test_quoted_paragraphs_with_commas_still_read(tmp_path):
    f = tmp_path / "para.csv"
    f.write_text('id,text,label\n'
                 'a,Good.,pos\nb,Bad.,neg\nc,Fine.,pos\nd,Dull.,neg\ne,Fun.,pos\n'
                 'f,"First, a line, with commas.\nThen, another, one.\nAnd, the end, pos",neg\n'
                 'g,Last.,pos\n', encoding="utf-8")
    ds = read_dataset(f, sentiment())
    assert ds.rejects == []
    assert ds.records[5].text() == "First, a line, with commas.\nThen, another, one.\nAnd, the end, pos"


def test_a_stray_quote_on_the_last_line(tmp_path):
    t = tmp_path / "last.tsv"
    t.write_text('text\tlabel\nGood.\tpos\n"Bad.\tneg\n', encoding="utf-8")
    assert as_tuples(read_dataset(t, sentiment())) == [("1", "Good.", "positive"), ("2", '"Bad.', "negative")]
    c = tmp_path / "last.csv"
    c.write_text('text,label\nGood.,pos\n"Bad.,neg\n', encoding="utf-8")
    ds = read_dataset(c, sentiment())
    assert as_tuples(ds) == [("1", "Good.", "positive")]
    assert ds.rejects[0].row == 2 and "line 3" in ds.rejects[0].problem


def test_tsv_quotes_that_do_not_close_a_field_are_kept(tmp_path):
    f = tmp_path / "said.tsv"
    f.write_text('text\tlabel\n"Hello," she said, "what a film."\tpos\n"Titanic" is dull.\tneg\n', encoding="utf-8")
    assert [r.text() for r in read_dataset(f, sentiment()).records] == ['"Hello," she said, "what a film."',
                                                                        '"Titanic" is dull.']


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_a_lone_carriage_return_inside_a_field_keeps_the_row_whole(tmp_path, fmt, ending):
    sep = "\t" if fmt == "tsv" else ","
    f = tmp_path / f"cr.{fmt}"
    lines = ["id", "text", "label"], ["a", "Good.", "pos"], ["b", "Great film.\rReally dull though.", "neg"], \
        ["c", "Wait.\rA warm story.", "pos"], ["d", '"Quoted\rtext."', "neg"], ["e", "Fine.", "pos"]
    f.write_bytes(ending.join(sep.join(cells) for cells in lines).encode("utf-8") + ending.encode())
    ds = read_dataset(f, sentiment())
    assert ds.rejects == [] and ds.rows_read == 5
    assert as_tuples(ds) == [("a", "Good.", "positive"), ("b", "Great film.\rReally dull though.", "negative"),
                             ("c", "Wait.\rA warm story.", "positive"), ("d", "Quoted\rtext.", "negative"),
                             ("e", "Fine.", "positive")]


def test_a_lone_carriage_return_as_the_first_column_is_never_half_a_row(tmp_path):
    f = tmp_path / "cr.tsv"
    f.write_bytes(b"text\tlabel\nGood.\tpos\nThe head.\rThe tail.\tneg\n")
    ds = read_dataset(f, sentiment())
    assert as_tuples(ds) == [("1", "Good.", "positive"), ("2", "The head.\rThe tail.", "negative")]


@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_a_file_whose_lines_end_in_carriage_returns_alone_still_reads(tmp_path, fmt):
    sep = "\t" if fmt == "tsv" else ","
    f = tmp_path / f"mac.{fmt}"
    f.write_bytes(f"text{sep}label\rGood.{sep}pos\rBad.{sep}neg\r".encode())
    assert as_tuples(read_dataset(f, sentiment())) == [("1", "Good.", "positive"), ("2", "Bad.", "negative")]


@pytest.mark.parametrize("name", ["o.tsv", "o.csv"])
def test_written_quotes_tabs_and_newlines_read_back(tmp_path, name):
    rows = [{"text": t, "label": "pos"} for t in ['Quote " and\nnewline.', "A\ttab, and a comma.", '"Quoted" start.',
                                                  "Plain."]]
    write_rows(rows, tmp_path / name)
    ds = read_dataset(tmp_path / name, sentiment())
    assert [r.text() for r in ds.records] == [r["text"] for r in rows] and ds.rejects == []


# --------------------------------------------------------------------------- undecodable ids and labels


def test_undecodable_bytes_in_the_id_or_label_are_a_clean_reject(tmp_path):
    f = tmp_path / "ids.csv"
    f.write_bytes(b"id,text,label,note\n"
                  b"a,Good.,pos,fine\n"
                  b"b\xe9,Bad.,neg,fine\n"          # row 2: Latin-1 byte in the id
                  b"c,Dull.,n\xe9g,fine\n"          # row 3: ... in the label
                  b"d,Fun.,pos,caf\xe9\n")          # row 4: ... in another column: kept, replaced
    ds = read_dataset(f, sentiment())
    assert [r.id for r in ds.records] == ["a", "d"]
    assert {r.row: r.problem for r in ds.rejects} == {2: "undecodable bytes (not UTF-8) in column 'id'",
                                                      3: "undecodable bytes (not UTF-8) in column 'label'"}
    assert ds.records[1].meta == {"note": "caf\ufffd"}
    json.dumps([r.to_json() for r in ds.rejects], ensure_ascii=False).encode("utf-8")
    for r in ds.records:
        r.id.encode("utf-8")


def test_lone_surrogates_from_json_escapes_are_rejected(tmp_path):
    f = tmp_path / "esc.jsonl"
    f.write_text('{"id": "a", "text": "Good.", "label": "pos"}\n'
                 '{"id": "b\\ud800", "text": "Bad.", "label": "neg"}\n'
                 '{"id": "c", "text": "Dull \\udce9.", "label": "neg"}\n'
                 '{"id": "d", "text": "Fun.", "label": "pos\\udfff"}\n'
                 '{"id": "e", "text": "Fine.", "label": "pos", "x\\ud801": "y\\ud802", "m": {"k": ["\\udc00"]}}\n'
                 '{"id": "f", "text": "Odd \\ud800.", "label": "pos", "m": {"k": ["\\udc00"]}}\n', encoding="utf-8")
    ds = read_dataset(f, sentiment())
    assert [r.id for r in ds.records] == ["a", "e"]
    problems = {r.row: r.problem for r in ds.rejects}
    assert set(problems) == {2, 3, 4, 6}
    assert "column 'id'" in problems[2] and "column 'text'" in problems[3] and "column 'label'" in problems[4]
    assert problems[6] == "a lone surrogate (not valid Unicode) in column 'text'"
    json.dumps(ds.records[1].meta, ensure_ascii=False).encode("utf-8")
    json.dumps([r.to_json() for r in ds.rejects], ensure_ascii=False).encode("utf-8")


# ------------------------------------------------------------------------- JSON values that are not text


def test_jsonl_text_that_is_not_a_string_is_rejected(tmp_path):
    f = tmp_path / "types.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "Good.", "label": "pos"},
        {"id": "b", "text": {"a": "bad"}, "label": "neg"},
        {"id": "c", "text": 5, "label": "neg"},
        {"id": "d", "text": ["Bad."], "label": "neg"},
        {"id": "e", "text": True, "label": "neg"},
        {"id": "f", "text": "Fine.", "label": 1},           # numeric labels stay allowed
        {"id": "g", "text": "Fine.", "label": {"y": 1}},
        {"id": {"k": 1}, "text": "Fine.", "label": "pos"},
        {"id": 9, "text": "Dull.", "label": 0.0},           # numeric ids too
    ]) + "\n", encoding="utf-8")
    ds = read_dataset(f, sentiment())
    assert as_tuples(ds) == [("a", "Good.", "positive"), ("f", "Fine.", "positive"), ("9", "Dull.", "negative")]
    assert {r.row: r.problem for r in ds.rejects} == {
        2: "text in column 'text' is a JSON object, not a string",
        3: "text in column 'text' is a number, not a string",
        4: "text in column 'text' is a JSON array, not a string",
        5: "text in column 'text' is true/false, not a string",
        7: "label in column 'label' is a JSON object, not a string or number",
        8: "id in column 'id' is a JSON object, not a string or number",
    }


def test_nli_fields_that_are_not_strings_are_rejected(tmp_path):
    f = tmp_path / "nli.jsonl"
    f.write_text(json.dumps({"premise": "A man walks.", "hypothesis": {"h": "x"}, "label": "e"}) + "\n"
                 + json.dumps({"premise": 3, "hypothesis": "A man.", "label": "e"}) + "\n"
                 + json.dumps({"premise": "A man walks.", "hypothesis": "A man.", "label": 0}) + "\n",
                 encoding="utf-8")
    ds = read_dataset(f, make_task("nli"))
    assert [r.id for r in ds.records] == ["3"]
    assert {r.row: r.problem for r in ds.rejects} == {
        1: "text in column 'hypothesis' is a JSON object, not a string",
        2: "text in column 'premise' is a number, not a string",
    }


# ---------------------------------------------------------------------------- size of what is copied aside


def test_a_huge_rejected_row_is_truncated_in_the_reject(tmp_path):
    big = "x" * 5_000_000
    f = tmp_path / "big.jsonl"
    f.write_text(json.dumps({"id": "a", "text": big, "label": "pos", "note": "short",
                             "blob": {"k": ["y" * 1000] * 2000}}) + "\n"
                 + json.dumps({"id": "b", "text": "Good.", "label": "pos"}) + "\n", encoding="utf-8")
    ds = read_dataset(f, sentiment())
    [rej] = ds.rejects
    assert rej.problem.startswith("text in column 'text' has 5,000,000 characters")
    dumped = json.dumps(rej.to_json(), ensure_ascii=False)
    assert len(dumped) < 2_000
    raw = rej.to_json()["raw"]
    assert raw["text"].startswith("x" * 300) and "truncated" in raw["text"] and "5,000,000 characters" in raw["text"]
    assert raw["note"] == "short" and raw["id"] == "a" and raw["label"] == "pos"
    assert "truncated" in raw["blob"]
    # copying a reject (as the pairs reader does) does not truncate twice
    again = Reject(rej.source, rej.row, rej.problem, rej.raw)
    assert again.raw == rej.raw


def test_a_huge_unparseable_line_is_truncated_too(tmp_path):
    r = Reject("f.csv", 1, "bad " + "p" * 100_000, "z" * 100_000)
    assert len(json.dumps(r.to_json())) < 2_000 and "100,000 characters" in r.raw
    many = Reject("f.jsonl", 1, "bad", {f"c{i}": i for i in range(10_000)})
    assert len(json.dumps(many.to_json())) < 5_000


# -- numbers as labels ------------------------------------------------------------------------------------

def _csv(tmp_path, header, rows):
    f = tmp_path / "in.csv"
    f.write_text(header + "\n" + "\n".join(rows) + "\n")
    return f


@pytest.mark.parametrize("values", [("0", "1"), ("1", "0.0"), ("-1", "+1"), ("1",)])
def test_a_binary_coding_reads_as_sentiment(tmp_path, values):
    f = _csv(tmp_path, "text,label", [f"row {i},{v}" for i, v in enumerate(values)])
    ds = read_dataset(f, make_task("sentiment"))
    assert len(ds.records) == len(values) and not ds.rejects


def test_star_counts_in_a_label_column_stop_the_run_instead_of_reading_1_as_positive(tmp_path):
    f = _csv(tmp_path, "text,label", ["awful service,1", "great pizza,5", "fine,3"])
    with pytest.raises(SchemaError) as err:
        read_dataset(f, make_task("sentiment"))
    msg = str(err.value)
    assert msg.startswith(f"{f}: the label column 'label' holds the numbers 1, 3, 5")
    assert "--label-col" in msg and "--label-map 1=negative,5=positive" in msg


def test_nli_codes_beyond_0_1_2_stop_the_run(tmp_path):
    f = tmp_path / "in.tsv"
    f.write_text("premise\thypothesis\tlabel\na\tb\t0\nc\td\t3\n")
    with pytest.raises(SchemaError, match="0/1/2"):
        read_dataset(f, make_task("nli"))
    f.write_text("premise\thypothesis\tlabel\na\tb\t0\nc\td\t2\n")
    assert [r.label for r in read_dataset(f, make_task("nli")).records] == ["entailment", "contradiction"]


def test_a_declared_label_map_reads_any_values_and_rejects_the_rest(tmp_path):
    f = _csv(tmp_path, "text,stars", ["awful service,1", "great pizza,5", "fine,3", "bad,1.0"])
    task = make_task("sentiment")
    ds = read_dataset(f, task, Schema(label_col="stars", label_map={"1": "negative", "5": "positive"}))
    assert [(r.text(), r.label) for r in ds.records] == [
        ("awful service", "negative"), ("great pizza", "positive"), ("bad", "negative")]
    assert [(r.row, r.problem) for r in ds.rejects] == [(3, "label '3' in column 'stars' is not in --label-map (1, 5)")]
    assert task.label_space.surface("negative") == "negative"  # written under the label, not the star count


def test_rating_levels_are_labels_not_codings(tmp_path):
    f = _csv(tmp_path, "text,stars", ["awful,1", "great,5"])
    assert [r.label for r in read_dataset(f, make_task("rating")).records] == ["1", "5"]


# --------------------------------------------------------------------------- control characters
def test_a_control_character_in_a_text_id_or_label_rejects_the_row_with_its_place(tmp_path):
    """A NUL would be stripped from the prompt but not from the "unchanged" check; so no later step sees one."""
    f = tmp_path / "ctl.jsonl"
    f.write_text('{"id": "a", "text": "Good food.", "label": "pos"}\n'
                 '{"id": "b", "text": "Bad\\u0000 food.", "label": "neg"}\n'
                 '{"id": "c\\u001b", "text": "Dull.", "label": "neg"}\n'
                 '{"id": "d", "text": "Fun.", "label": "pos\\u007f"}\n'
                 '{"id": "e", "text": "Tabs\\tand\\nlines are fine.", "label": "pos"}\n', encoding="utf-8")
    ds = read_dataset(f, sentiment())
    assert [r.id for r in ds.records] == ["a", "e"]
    assert {r.row: r.problem for r in ds.rejects} == {
        2: "a control character U+0000 at character 4 of column 'text'",
        3: "a control character U+001B at character 2 of column 'id'",
        4: "a control character U+007F at character 4 of column 'label'"}


def test_a_nul_byte_in_a_delimited_file_is_a_reject_not_an_unchanged_counterfactual(tmp_path):
    from cfaug.cli import main

    f = tmp_path / "nul.tsv"
    f.write_bytes(b"text\tlabel\nA great film.\tpositive\nA great\x00 film.\tpositive\n")
    assert main(["augment", str(f), "-o", str(tmp_path / "out.jsonl"), "--no-progress", "--seed", "0"]) in (0, 4)
    rejects = [json.loads(x) for x in (tmp_path / "out.jsonl.run" / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == 1 and "U+0000" in rejects[0]["problem"]
    assert all("\x00" not in x for x in (tmp_path / "out.jsonl").read_text().splitlines())
