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
