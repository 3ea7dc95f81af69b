"""ASTE-Data-V2 files through cfaug's readers and writers (format "aste", task "aste")."""

from __future__ import annotations

import pytest

from cfaug.data.io import DataError, detect_format, read_dataset, write_rows
from cfaug.data.labels import LabelError
from cfaug.data.records import Record
from cfaug.data.tasks import AsteTask, Task, TripletLabelSpace, make_task

GOOD1 = "The food was great .####[([1], [3], 'POS')]"
GOOD7 = "The battery life is very long .####[([1, 2], [5], 'positive'), ([1, 2], [4, 5], 'POS')]"
GOOD8 = "Nothing  to   report .####[]"

LINES = [
    GOOD1,                                                  # 1
    "",                                                     # 2 blank: skipped
    "No separator on this line",                            # 3
    "The staff were rude .####[([1], [3], 'NEG'",           # 4 bad literal
    "Nice view .####[([1], [7], 'POS')]",                   # 5 index out of range
    "Good pizza .####[([1], [0], 'HAPPY')]",                # 6 unknown polarity
    GOOD7,                                                  # 7
    GOOD8,                                                  # 8
    "   ",                                                  # 9 blank: skipped
    "Cheap but noisy .####",                                # 10 missing label
]


@pytest.fixture
def aste_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_txt_is_the_aste_format(tmp_path):
    assert detect_format(tmp_path / "x.txt") == "aste"
    assert detect_format(tmp_path / "X.TXT") == "aste"


def test_read_dataset_records(aste_file):
    data = read_dataset(aste_file, make_task("aste"))
    assert [(r.id, r.text(), r.label) for r in data.records] == [
        ("1", "The food was great .", "[([1], [3], 'POS')]"),
        ("7", "The battery life is very long .", "[([1, 2], [4, 5], 'POS'), ([1, 2], [5], 'POS')]"),
        ("8", "Nothing to report .", "[]"),
    ]
    assert data.rows_read == 8             # the two blank lines are not rows
    assert data.schema.label_col == "label" and data.schema.text_cols == {"text": "text"}


def test_read_dataset_rejects_name_file_and_row(aste_file):
    data = read_dataset(aste_file, make_task("aste"))
    by_row = {r.row: r for r in data.rejects}
    assert sorted(by_row) == [3, 4, 5, 6, 10]
    for r in data.rejects:
        assert r.source == str(aste_file)
        assert r.message().startswith(f"{aste_file}, row {r.row}: ")
    assert "no '####' between the sentence and its triplets" in by_row[3].problem
    assert "invalid triplet label" in by_row[4].problem and "cannot parse" in by_row[4].problem
    assert "triplet 1 points at token 7 but the sentence has 3 tokens" in by_row[5].problem
    assert "column 'label'" in by_row[5].problem
    assert "polarity 'HAPPY' is not one of POS, NEU, NEG" in by_row[6].problem
    assert "missing label" in by_row[10].problem
    # a rejected line keeps its content for rejects.jsonl
    assert by_row[5].raw == {"text": "Nice view .", "label": "[([1], [7], 'POS')]"}


def test_blank_file_is_a_data_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(DataError, match="empty"):
        read_dataset(path, make_task("aste"))


def test_write_rows_txt_round_trip(tmp_path, aste_file):
    data = read_dataset(aste_file, make_task("aste"))
    rows = [{"id": r.id, "text": r.text(), "label": r.label, "method": "t2s"} for r in data.records]
    out = tmp_path / "out" / "aug.txt"
    write_rows(rows, out)
    assert out.read_text(encoding="utf-8").splitlines() == [
        "The food was great .####[([1], [3], 'POS')]",
        "The battery life is very long .####[([1, 2], [4, 5], 'POS'), ([1, 2], [5], 'POS')]",
        "Nothing to report .####[]",
    ]
    again = read_dataset(out, make_task("aste"))
    assert [(r.text(), r.label) for r in again.records] == [(r.text(), r.label) for r in data.records]
    assert again.rejects == []
    assert not (out.parent / "aug.txt.tmp").exists()


def test_write_rows_txt_text_like_columns_and_missing_label(tmp_path):
    out = tmp_path / "x.txt"
    write_rows([{"sentence": "good  food\n.", "label": "[([1], [0], 'POS')]"}, {"sentence": "nothing", "label": None}],
               out)
    assert out.read_text(encoding="utf-8") == "good food .####[([1], [0], 'POS')]\nnothing####[]\n"


def test_write_rows_txt_needs_a_label_column(tmp_path):
    with pytest.raises(DataError, match="no text or label column"):
        write_rows([{"text": "good food"}], tmp_path / "x.txt")


def test_write_rows_txt_refuses_labels_that_are_not_triplets(tmp_path):
    with pytest.raises(DataError, match=r"row 2 has the label 'positive', not a triplet list.*--output-format"):
        write_rows([{"text": "a b", "label": "[]"}, {"text": "good food", "label": "positive"}], tmp_path / "x.txt")
    assert not list(tmp_path.iterdir())


def test_a_txt_file_of_other_data_has_no_format(tmp_path):
    from cfaug.data.io import detect_format

    other = tmp_path / "notes.txt"
    other.write_text("just a sentence\n")
    with pytest.raises(DataError, match="cannot tell the format"):
        detect_format(other)
    aste = tmp_path / "train.txt"
    aste.write_text("\nThe food .####[([1], [1], 'POS')]\n")
    assert detect_format(aste) == "aste" and detect_format(tmp_path / "new.txt") == "aste"


# ------------------------------------------------------------------------------------------------ the task


def test_make_task_aste():
    task = make_task("aste")
    assert isinstance(task, AsteTask)
    assert task.name == "aste"
    assert isinstance(task.label_space, TripletLabelSpace)
    assert task.roles == ("text",)


def test_targets_are_the_records_own_label():
    task = make_task("aste")
    rec = Record(id="1", fields={"text": "The food was great ."}, label="[([1], [3], 'POS')]")
    assert task.targets(rec) == ["[([1], [3], 'POS')]"]
    assert task.opposite(rec) == ["[([1], [3], 'POS')]"]
    assert task.targets(Record(id="2", fields={"text": "x"}, label=None)) == []


def test_label_space_canonical():
    space = make_task("aste").label_space
    assert space.canonical('[[[6], [7], "negative"], [[1], [3], "POS"]]') == "[([1], [3], 'POS'), ([6], [7], 'NEG')]"
    assert space.canonical([[[1], [3], "positive"]]) == "[([1], [3], 'POS')]"
    assert space.surface("[([1], [3], 'POS')]") == "[([1], [3], 'POS')]"
    for missing in (None, "", " nan ", "None", "null"):
        with pytest.raises(LabelError, match="missing label"):
            space.canonical(missing)
    with pytest.raises(LabelError, match="invalid triplet label: triplet 1: .*not a run of consecutive"):
        space.canonical("[([1, 3], [4], 'POS')]")


def test_check_record():
    task = make_task("aste")
    ok = Record(id="1", fields={"text": "The food was great ."}, label="[([1], [3], 'POS')]")
    assert task.check_record(ok) is None
    bad = Record(id="2", fields={"text": "Nice view ."}, label="[([1], [3], 'POS')]")
    assert "points at token 3 but the sentence has 3 tokens" in task.check_record(bad)
    assert task.check_record(Record(id="3", fields={"text": "x"}, label=None)) is None
    # other tasks accept every record
    assert Task().check_record(bad) is None
    assert make_task("sentiment").check_record(bad) is None
