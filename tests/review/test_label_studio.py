"""Label Studio interchange on files: tasks in its import format with a labeling interface that matches
them, and its JSON (and JSON-MIN) export read back as decisions."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from decided_runs import NLI_CONFIG, record, simple_run, write_run

from cfaug.data.io import DataError
from cfaug.review.label_studio import CHOICES, import_annotations, read_annotations, write_tasks
from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore

CHOICE = {name: text for name, (text, _) in CHOICES.items()}


def ls_annotation(ann_id, user, result, *, updated="2026-01-01T10:00:00.000000Z", cancelled=False, lead=3.5):
    """An annotation as Label Studio's JSON export writes it (docs: 'Label Studio JSON format of annotated tasks')."""
    return {"id": ann_id, "completed_by": user, "result": result, "was_cancelled": cancelled, "ground_truth": False,
            "created_at": updated, "updated_at": updated, "lead_time": lead, "result_count": 0, "task": 1}


def choice(name, value, to="rewrite_text"):
    return {"id": "r" + name, "from_name": name, "to_name": to, "type": "choices", "origin": "manual",
            "value": {"choices": [value]}}


def textarea(name, text, to="rewrite_text"):
    return {"id": "t" + name, "from_name": name, "to_name": to, "type": "textarea", "origin": "manual",
            "value": {"text": [text]}}


def exported(tasks_file, annotations_by_task):
    """Label Studio's export of the tasks cfaug wrote, with the given annotations per task index."""
    tasks = json.loads(tasks_file.read_text(encoding="utf-8"))
    out = []
    for n, t in enumerate(tasks):
        out.append({"id": 100 + n, "data": t["data"], "annotations": annotations_by_task.get(n, []), "predictions": [],
                    "created_at": "2026-01-01T09:00:00Z", "updated_at": "2026-01-01T09:00:00Z", "project": 7})
    return out


def test_tasks_and_labeling_interface_match(tmp_path):
    run = simple_run(tmp_path / "run", 4)
    out, cfg, n = write_tasks(run, tmp_path / "ls" / "tasks.json")
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert n == 4 and isinstance(tasks, list) and all(set(t) == {"data"} for t in tasks)
    assert {t["data"]["cfaug_item"] for t in tasks} == {f"k{i}#0" for i in range(4)}
    data = tasks[0]["data"]
    item = load_items(run).by_id()[data["cfaug_item"]]
    assert data["text"] == item.rewrite["text"] and data["original_text"] == item.original["text"]
    assert data["target_label"] == "negative" and data["source_label"] == "positive"
    assert cfg == tmp_path / "ls" / "tasks.label_config.xml"
    root = ET.fromstring(cfg.read_text(encoding="utf-8"))
    assert root.tag == "View"
    objects = {e.get("name"): e for e in root.iter() if e.tag == "Text"}
    # every task variable the interface shows is in every task's data
    variables = {v[1:] for e in root.iter() for v in [e.get("value") or ""] if v.startswith("$")}
    assert variables and all(variables <= set(t["data"]) for t in tasks)
    controls = [e for e in root.iter() if e.tag in ("Choices", "TextArea")]
    assert {c.get("name") for c in controls} == {"decision", "label", "edited_text"}
    assert all(c.get("toName") in objects for c in controls)
    aliases = [c.get("alias") for c in root.iter("Choice") if c.get("alias")]
    assert aliases == list(CHOICES)
    assert [c.get("value") for c in root.find("Choices[@name='label']")] == ["negative", "positive"]


def test_nli_interface_edits_the_edited_side(tmp_path):
    row = {"premise": "A man sleeps.", "hypothesis": "A man is awake.", "label": "contradiction", "source_id": "p1",
           "original_premise": "A man sleeps.", "original_hypothesis": "A man rests.", "original_label": "entailment",
           "method": "zero-shot.v1", "meta": {}}
    run = write_run(tmp_path / "run", [[row]], NLI_CONFIG)
    out, cfg, _ = write_tasks(run, tmp_path / "tasks.json")
    data = json.loads(out.read_text(encoding="utf-8"))[0]["data"]
    assert data["premise"] == "A man sleeps." and data["hypothesis"] == "A man is awake."
    root = ET.fromstring(cfg.read_text(encoding="utf-8"))
    assert [t.get("name") for t in root.iter("TextArea")] == ["edited_hypothesis"]
    assert {c.get("value") for c in root.find("Choices[@name='label']")} == {"entailment", "neutral", "contradiction"}


def test_other_label_naming_the_original_label_is_not_flipped_as_in_the_page(tmp_path):
    """What the review page records for the original's own label picked as "another label" (not_flipped), an
    import records too, so that agreement between the two counts the same answer as the same; a corrected
    text that changes no word is the machine's text accepted, as the page would not save it as an edit."""
    row = {"premise": "A man sleeps.", "hypothesis": "A man is awake.", "label": "contradiction", "source_id": "p1",
           "original_premise": "A man sleeps.", "original_hypothesis": "A man rests.", "original_label": "entailment",
           "method": "zero-shot.v1", "meta": {}}
    run = write_run(tmp_path / "run", [[row], [dict(row, source_id="p2")], [dict(row, source_id="p3")]], NLI_CONFIG)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    ids = [t["data"]["cfaug_item"] for t in json.loads(tasks.read_text(encoding="utf-8"))]
    to = "rewrite_hypothesis"
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported(tasks, {
        0: [ls_annotation(1, 11, [choice("decision", CHOICE["other_label"], to), choice("label", "Entailment", to)])],
        1: [ls_annotation(2, 11, [choice("decision", CHOICE["other_label"], to), choice("label", "neutral", to)])],
        2: [ls_annotation(3, 11, [choice("decision", CHOICE["edited"], to),
                                  textarea("edited_hypothesis", "a man is  AWAKE!", to)])],
    })), encoding="utf-8")
    s = import_annotations(run, f, annotator="ls")
    assert s.recorded == 3 and not s.problems
    record(run, [(ids[0], "page", "not_flipped")])  # the same answer given in the review page
    with ReviewStore(run) as store:
        cur = store.current()
    assert (cur[(ids[0], "ls")].decision, cur[(ids[0], "ls")].label) == ("not_flipped", None)
    assert (cur[(ids[1], "ls")].decision, cur[(ids[1], "ls")].label) == ("other_label", "neutral")
    assert (cur[(ids[2], "ls")].decision, cur[(ids[2], "ls")].fields) == ("accepted", None)
    from cfaug.review.stats import review_stats

    agreement = review_stats(run)["agreement"]
    assert agreement["shared_items"] == 1 and agreement["observed"] == 1.0


@pytest.fixture
def exported_file(tmp_path):
    run = simple_run(tmp_path / "run", 5)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    ids = [t["data"]["cfaug_item"] for t in json.loads(tasks.read_text(encoding="utf-8"))]
    annotations = {
        0: [ls_annotation(1, 11, [choice("decision", CHOICE["accepted"])], lead=2.0),
            ls_annotation(2, 12, [choice("decision", "rejected")], lead=5.0)],  # an alias value is read too
        1: [ls_annotation(3, 11, [choice("decision", CHOICE["edited"]), textarea("edited_text", "A fixed text.")])],
        2: [ls_annotation(4, 11, [choice("decision", CHOICE["other_label"]), choice("label", "positive")])],
        3: [ls_annotation(5, 12, [], cancelled=True),                               # skipped in Label Studio
            ls_annotation(6, 11, [choice("decision", CHOICE["edited"])])],          # edited without a text
        4: [ls_annotation(7, 11, [choice("decision", "Maybe")]),                    # not one of ours
            ls_annotation(8, 11, [choice("decision", CHOICE["not_flipped"])], updated="2026-01-01T09:00:00Z"),
            ls_annotation(9, 11, [choice("decision", CHOICE["accepted"])], updated="2026-01-01T11:00:00Z")],
    }
    export = exported(tasks, annotations)
    export.append({"id": 999, "data": {"text": "a task from elsewhere"}, "annotations": []})
    f = tmp_path / "export.json"
    f.write_text(json.dumps(export), encoding="utf-8")
    return run, f, ids


def test_read_annotations(exported_file):
    run, f, ids = exported_file
    imported, problems = read_annotations(f, load_items(run))
    got = {(d.item, d.user, d.decision) for d in imported}
    # "other label: positive" names the original's own label: the label did not flip
    assert got == {(ids[0], "11", "accepted"), (ids[0], "12", "rejected"), (ids[1], "11", "edited"),
                   (ids[2], "11", "not_flipped"), (ids[3], "12", "skipped"), (ids[4], "11", "not_flipped"),
                   (ids[4], "11", "accepted")}
    edited = next(d for d in imported if d.decision == "edited")
    assert edited.fields == {"text": "A fixed text."}
    assert next(d for d in imported if d.item == ids[2]).label is None
    assert next(d for d in imported if d.user == "12" and d.decision == "rejected").seconds == 5.0
    # in the order they were last updated: the later annotation on task 4 comes last
    on4 = [d.decision for d in imported if d.item == ids[4]]
    assert on4 == ["not_flipped", "accepted"]
    assert len(problems) == 3
    assert any(re.search(r"export\.json, task 4 \(id 103\), annotation 6: 'edited' without a corrected text", p)
               for p in problems)
    assert any("annotation 7: unknown decision 'Maybe'" in p for p in problems)
    assert any("task 6 (id 999): no 'cfaug_item'" in p for p in problems)


def test_import_records_decisions_once(exported_file):
    run, f, ids = exported_file
    s = import_annotations(run, f, annotator="team")
    # user 11's later annotation on task 4 replaces the earlier one: recorded counts what is kept
    assert s.recorded == 6 and s.replaced == 1 and s.already == 0 and len(s.problems) == 3
    assert s.by_annotator == {"team:11": 4, "team:12": 2}  # two Label Studio users: one name each
    with ReviewStore(run) as store:
        cur = store.current()
    assert len(cur) == s.recorded
    assert cur[(ids[4], "team:11")].decision == "accepted"  # the latest annotation is the live one
    assert cur[(ids[1], "team:11")].fields == {"text": "A fixed text."}
    assert cur[(ids[0], "team:12")].seconds == 5.0
    again = import_annotations(run, f, annotator="team")
    assert again.recorded == 0 and again.already == 6 and len(again.problems) == 3
    with ReviewStore(run) as store:
        assert len(store.history()) == 6


def test_one_user_takes_the_given_name(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported(tasks, {0: [ls_annotation(1, {"id": 4, "email": "eve@example.org"},
                                                               [choice("decision", CHOICE["rejected"])])]})))
    assert import_annotations(run, f, annotator="eve").by_annotator == {"eve": 1}
    assert import_annotations(run, f).already == 0  # without --annotator the name differs: label-studio:<email>
    with ReviewStore(run) as store:
        assert store.annotators() == ["eve", "label-studio:eve@example.org"]


def test_json_min_export(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    data = json.loads(tasks.read_text(encoding="utf-8"))
    rows = [{**data[0]["data"], "id": 1, "annotator": "ann@example.org", "annotation_id": 5,
             "decision": CHOICE["edited"], "edited_text": "Better text.", "lead_time": 7.0,
             "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"},
            {**data[1]["data"], "id": 2, "annotator": "ann@example.org", "annotation_id": 6,
             "decision": {"choices": [CHOICE["accepted"]]}, "lead_time": 1.0}]
    f = tmp_path / "min.json"
    f.write_text(json.dumps(rows), encoding="utf-8")
    s = import_annotations(run, f, annotator="ann")
    assert s.recorded == 2 and s.by_annotator == {"ann": 2} and not s.problems
    with ReviewStore(run) as store:
        cur = store.current()
    assert cur[(data[0]["data"]["cfaug_item"], "ann")].fields == {"text": "Better text."}
    assert cur[(data[1]["data"]["cfaug_item"], "ann")].decision == "accepted"


def test_unreadable_exports(tmp_path):
    run = simple_run(tmp_path / "run", 1)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json: not a Label Studio JSON export \(not valid JSON"):
        import_annotations(run, bad)
    bad.write_text('"a string"', encoding="utf-8")
    with pytest.raises(DataError, match="expected a list of tasks"):
        import_annotations(run, bad)
    with pytest.raises(DataError, match="no such file"):
        import_annotations(run, tmp_path / "missing.json")
    assert not (run / "review.sqlite").exists()


def test_tasks_skip_nothing_decided_elsewhere(tmp_path):
    """Tasks are written for every item whatever was decided in cfaug's own app (Label Studio keeps its own
    state); the run's review store is left alone."""
    run = simple_run(tmp_path / "run", 3)
    record(run, [("k0#0", "ann", "accepted")])
    _, _, n = write_tasks(run, tmp_path / "tasks.json")
    assert n == 3
    with ReviewStore(run) as store:
        assert len(store.history()) == 1


def json_min_rows(data, users, *, decisions=("accepted", "rejected"), updated="2026-01-01T00:00:00Z"):
    """Label Studio's JSON-MIN export: one row per annotation, the task's data at the top, ``annotator`` the
    user's numeric id (as newer Label Studio versions write it)."""
    rows = []
    for n, task in enumerate(data):
        for u, user in enumerate(users):
            rows.append({**task["data"], "id": 100 + n, "annotator": user, "annotation_id": 100 * user + n,
                         "decision": CHOICE[decisions[(n + u) % len(decisions)]], "lead_time": 2.0,
                         "created_at": updated, "updated_at": updated})
    return rows


def test_json_min_numeric_users_stay_apart(tmp_path, capsys):
    from cfaug.cli import main

    run = simple_run(tmp_path / "run", 4)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    data = json.loads(tasks.read_text(encoding="utf-8"))
    f = tmp_path / "min.json"
    f.write_text(json.dumps(json_min_rows(data, [7, 9])), encoding="utf-8")
    assert main(["review", "import-label-studio", str(run), str(f)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["recorded"] == 8
    assert printed["by_annotator"] == {"label-studio:7": 4, "label-studio:9": 4}
    with ReviewStore(run) as store:
        cur = store.current()
    assert len(cur) == 8  # what was reported recorded is what is kept
    first = data[0]["data"]["cfaug_item"]
    assert cur[(first, "label-studio:7")].decision == "accepted"
    assert cur[(first, "label-studio:9")].decision == "rejected"
    assert import_annotations(run, f).already == 8  # nothing twice


def test_an_import_never_supersedes_another_annotator(tmp_path):
    run = simple_run(tmp_path / "run", 3)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    data = json.loads(tasks.read_text(encoding="utf-8"))
    ids = [t["data"]["cfaug_item"] for t in data]
    record(run, [(ids[0], "alice", "rejected", {"request_id": "page-1"})])  # decided in the review page
    f = tmp_path / "eve.json"
    f.write_text(json.dumps(json_min_rows(data, [7], decisions=("accepted",))), encoding="utf-8")
    s = import_annotations(run, f, annotator="alice")
    assert s.recorded == 2 and s.by_annotator == {"alice": 2}
    assert len(s.problems) == 1 and "'alice' already has a decision on item" in s.problems[0]
    assert "made in the review page" in s.problems[0] and "task 1 (id 100)" in s.problems[0]
    with ReviewStore(run) as store:
        cur = store.current("alice")
    assert cur[(ids[0], "alice")].decision == "rejected"  # the page's decision is still the live one
    assert len(cur) == 3

    # another Label Studio user imported under the same name later: not over the first one's decisions
    other = tmp_path / "bob.json"
    rows = json_min_rows(data, [8], decisions=("rejected",), updated="2026-02-01T00:00:00Z")
    other.write_text(json.dumps(rows), encoding="utf-8")
    s2 = import_annotations(run, other, annotator="alice")
    assert s2.recorded == 0 and len(s2.problems) == 3
    assert all("already has a decision" in p for p in s2.problems)
    assert any("imported from another Label Studio annotation" in p for p in s2.problems)

    # a later version of the same user's annotation does replace its earlier import
    newer = json_min_rows(data, [7], decisions=("not_flipped",), updated="2026-03-01T00:00:00Z")
    f.write_text(json.dumps(newer), encoding="utf-8")
    s3 = import_annotations(run, f, annotator="alice")
    assert s3.recorded == 2 and len(s3.problems) == 1
    with ReviewStore(run) as store:
        cur = store.current("alice")
    assert [cur[(i, "alice")].decision for i in ids] == ["rejected", "not_flipped", "not_flipped"]


def test_annotations_without_a_user_do_not_replace_each_other(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    anns = [ls_annotation(1, None, [choice("decision", CHOICE["accepted"])], updated="2026-01-01T10:00:00Z"),
            ls_annotation(2, None, [choice("decision", CHOICE["rejected"])], updated="2026-01-01T11:00:00Z")]
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported(tasks, {0: anns})), encoding="utf-8")
    s = import_annotations(run, f)
    assert s.recorded == 1 and s.by_annotator == {"label-studio:unknown": 1}
    assert len(s.problems) == 1 and "annotation 2: would replace the decision of" in s.problems[0]
    with ReviewStore(run) as store:
        assert [d.decision for d in store.current().values()] == ["accepted"]


def test_files_imported_by_earlier_versions_are_recognised(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    tasks, _, _ = write_tasks(run, tmp_path / "tasks.json")
    data = json.loads(tasks.read_text(encoding="utf-8"))
    f = tmp_path / "export.json"
    f.write_text(json.dumps(exported(tasks, {0: [ls_annotation(5, 11, [choice("decision", CHOICE["accepted"])])]})),
                 encoding="utf-8")
    # the request id an earlier import recorded this annotation with: task id, annotation id, update time
    record(run, [(data[0]["data"]["cfaug_item"], "label-studio:11", "accepted",
                  {"request_id": "label-studio:100:5:2026-01-01T10:00:00.000000Z"})])
    s = import_annotations(run, f)
    assert s.recorded == 0 and s.already == 1 and not s.problems
