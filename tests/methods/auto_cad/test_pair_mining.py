import pytest

from cfaug.methods.auto_cad.pairs import mine_pairs


def test_one_word_substitutions_both_ways(fixtures_dir):
    table = mine_pairs(fixtures_dir / "pairs.tsv")
    assert table["boring"] == {"fascinating": 2, "gripping": 1}
    assert table["fascinating"] == {"boring": 2}
    assert table["dull"] == {"moving": 1, "lively": 1}
    assert table["superb"] == {"wooden": 1} and table["ruins"] == {"lifts": 1}
    assert "decent" not in table and "a" not in table  # unchanged words are not substitutions


def test_same_label_rows_and_multi_word_changes_are_not_mined(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"text": "A good film.", "label": "pos", "pair_id": 1}\n'
                 '{"text": "A fine film.", "label": "pos", "pair_id": 1}\n'
                 '{"text": "A truly good film.", "label": "pos", "pair_id": 2}\n'
                 '{"text": "A bad and dull film.", "label": "neg", "pair_id": 2}\n', encoding="utf-8")
    assert mine_pairs(f) == {}


def test_explicit_columns_and_missing_ones(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text("body,y,grp\nGreat cast.,1,g\nWeak cast.,0,g\n", encoding="utf-8")
    assert mine_pairs(f, text_col="body", label_col="y", pair_col="grp") == {"great": {"weak": 1}, "weak": {"great": 1}}
    with pytest.raises(ValueError, match=r"p.csv: paired data needs text, label and pair-id columns .*found body, y, grp"):
        mine_pairs(f)


PHRASE_PAIRS = "".join(
    f'{{"text": "{a}", "label": "positive", "pair_id": {k}}}\n{{"text": "{b}", "label": "negative", "pair_id": {k}}}\n'
    for k, (a, b) in enumerate([
        ("This is a must see for everyone.", "This is a must miss for everyone."),
        ("A must see, really.", "A must miss, really."),
        ("I highly recommend it.", "I can't recommend it."),
        ("We highly recommend the show.", "We can't recommend the show."),
        ("I loved the ending.", "I didn't like the ending."),
    ]))


def test_phrases_are_mined_by_direction(tmp_path):
    from cfaug.methods.auto_cad.pairs import mine_phrases

    f = tmp_path / "p.jsonl"
    f.write_text(PHRASE_PAIRS, encoding="utf-8")
    table = mine_phrases(f)
    assert table["positive"][("highly",)] == {("ca", "n't"): 2}
    assert table["negative"][("ca", "n't")] == {("highly",): 2}
    assert table["positive"][("loved",)] == {("did", "n't", "like"): 1}
    assert ("see",) not in table["positive"]  # one word for one word belongs to the word table


def test_auto_cad_applies_mined_phrases(tmp_path):
    from cfaug.data.records import Record, WorkItem
    from cfaug.data.tasks import make_task
    from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
    from cfaug.training.context import FitContext, StageContext

    f = tmp_path / "p.jsonl"
    f.write_text(PHRASE_PAIRS, encoding="utf-8")
    task = make_task("sentiment")
    train = [Record(f"r{i}", {"text": t}, lab) for i, (t, lab) in enumerate([
        ("A great film.", "positive"), ("A wonderful cast.", "positive"),
        ("A terrible film.", "negative"), ("An awful cast.", "negative")])]
    m = AutoCAD(AutoCADConfig(pairs=str(f), phrase_min_count=2, require_flip=False, folds=2), seed=0)
    (tmp_path / "a").mkdir()
    facts = m.fit(train, task, FitContext(artifact_dir=tmp_path / "a", progress=False))
    assert facts["mined_phrases"] > 0
    m.load(tmp_path / "a", task, StageContext(progress=False))
    item = WorkItem(Record("x", {"text": "I highly recommend this great film."}, "positive"), "negative")
    [cfs] = m.generate([item], task)
    cf = next(cf for cf in cfs if cf.meta["variant"] == "rep-ct")
    assert cf.fields["text"].startswith("I can't recommend this")
    assert any(e["kind"] == "phrase" and e["old"] == "highly" for e in cf.meta["edits"])


def test_a_cfaug_output_is_mined_like_a_paired_file(tmp_path):
    import json

    out = tmp_path / "out.jsonl"
    rows = [{"Text": "The acting was dreadful.", "Sentiment": "Negative", "original_Text": "The acting was superb.",
             "original_Sentiment": "Positive"}]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert mine_pairs(out) == {"superb": {"dreadful": 1}, "dreadful": {"superb": 1}}
