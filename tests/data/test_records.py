from cfaug.data.records import Counterfactual, Record, WorkItem


def test_record_text_defaults_to_the_single_text_field():
    r = Record(id="7", fields={"premise": "p", "hypothesis": "h"}, label="neutral")
    assert r.text("hypothesis") == "h"
    assert Record(id="8", fields={"text": "t"}, label=None).text() == "t"


def test_work_item_key_depends_on_id_and_target_only():
    r = Record(id="7", fields={"text": "t"}, label="positive")
    same = Record(id="7", fields={"text": "other"}, label="positive", meta={"x": 1})
    assert WorkItem(r, "negative").key == WorkItem(same, "negative").key
    assert WorkItem(r, "negative").key != WorkItem(r, "neutral").key
    assert WorkItem(r, "1").key != WorkItem(Record(id="71", fields={}, label=None), "").key


def test_counterfactual_passes_unless_a_filter_said_no():
    r = Record(id="7", fields={"text": "t"}, label="positive")
    assert Counterfactual(r, {"text": "u"}, "negative", "m").passed
    assert not Counterfactual(r, {"text": "u"}, "negative", "m", {"passed": False}).passed
