from cfaug.data.fingerprint import hash_file, hash_source, versions


def test_versions_name_python_and_the_main_packages():
    v = versions()
    assert v["python"].count(".") == 2
    for pkg in ("cfaug", "numpy", "torch", "transformers", "datasets"):
        assert v[pkg], pkg


def test_file_hash_follows_the_content(tmp_path):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("text\tlabel\nGood.\t1\n")
    b.write_text("text\tlabel\nGood.\t1\n")
    h = hash_source(a)
    assert h.startswith("sha256:") and len(h) == 71
    assert hash_source(str(a)) == h == hash_file(a)
    b.write_text("text\tlabel\nGood!\t1\n")
    assert hash_source(b) != h
    assert hash_file(None) is None and hash_file(tmp_path / "none") is None


def test_folder_hash_covers_every_file(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.arrow").write_bytes(b"1")
    before = hash_source(tmp_path / "d")
    (tmp_path / "d" / "state.json").write_text("{}")
    assert hash_source(tmp_path / "d") != before


def test_in_memory_tables_hash_by_content():
    import datasets
    import pandas as pd

    rows = [{"text": "Good.", "label": 1}, {"text": "Bad.", "label": 0}]
    h = hash_source(rows)
    assert hash_source(pd.DataFrame(rows)) == h == hash_source(datasets.Dataset.from_list(rows))
    assert hash_source(rows[:1]) != h


def test_param_sources_hash_what_path_parameters_name(tmp_path):
    from cfaug.data.fingerprint import hash_source, param_sources

    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("x\n")
    b.write_text("y\n")
    found = param_sources({"pairs": f"{a},{b}", "data": str(a), "models": "tfidf-logreg,cnn", "k": 5,
                           "half": f"{a},missing.tsv", "empty": "", "none": None})
    assert found == {"data": hash_source(a), "pairs": [hash_source(a), hash_source(b)]}
    assert param_sources({"long": "x" * 5000}) == {}
