import json

from cfaug.cli import main


def write(path, rows):
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{y}\n" for t, y in rows), encoding="utf-8")
    return str(path)


def test_downstream_table(tmp_path, capsys):
    pos = [f"{w} good {v}" for w in ("the film", "a plot", "this movie") for v in ("indeed", "overall", "today")]
    neg = [t.replace("good", "bad") for t in pos]
    train = write(tmp_path / "train.tsv", [(t, "positive") for t in pos[:6]] + [(t, "negative") for t in neg[:6]])
    dev = write(tmp_path / "dev.tsv", [(pos[6], "positive"), (neg[6], "negative")])
    test = write(tmp_path / "test.tsv", [(pos[7], "positive"), (neg[7], "negative"), (pos[8], "pos"), (neg[8], "neg")])
    aug = write(tmp_path / "aug.tsv", [(neg[0], "negative"), (pos[0], "positive")])
    out = tmp_path / "ds.json"
    md = tmp_path / "ds.md"
    code = main(["downstream", "--train", train, "--augment", f"cf={aug}", "--dev", dev, "--in-domain", f"t={test}",
                 "--out-of-domain", f"o={test}", "--seeds", "0,1", "-p", "c_grid=1", "-o", str(out),
                 "--markdown", str(md)])
    assert code == 0
    table = capsys.readouterr().out
    assert "| original + cf | 14 | 100.0 | 100.0 |" in table and "± 0.0" not in table
    assert "every seed (0, 1) gave the same accuracy" in table
    assert md.read_text(encoding="utf-8").strip() == table.strip()
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["seeds"] == [0, 1] and res["tests"]["o"]["kind"] == "out-of-domain"
    assert res["command"][0]


def test_downstream_needs_a_test_set_and_valid_names(tmp_path, capsys):
    f = write(tmp_path / "a.tsv", [("good", "positive"), ("bad", "negative")])
    assert main(["downstream", "--train", f, "--dev", f]) == 2
    assert "at least one test set" in capsys.readouterr().err
    assert main(["downstream", "--train", f, "--dev", f, "--in-domain", f]) == 2
    assert "NAME=FILE" in capsys.readouterr().err
    assert main(["downstream", "--train", f, "--dev", f, "--in-domain", f"x={f}", "--classifier", "nb"]) == 2
    assert "unknown downstream classifier" in capsys.readouterr().err


def test_downstream_on_a_style_task(tmp_path, capsys):
    formal = [f"{w} would you kindly {v}" for w in ("sir", "madam", "colleague") for v in ("reply", "confirm", "attend")]
    casual = [t.replace("would you kindly", "pls gonna") for t in formal]
    rows = [(t, "formal") for t in formal] + [(t, "informal") for t in casual]
    f = write(tmp_path / "style.tsv", rows)
    code = main(["downstream", "--task", "style", "--train", f, "--dev", f, "--in-domain", f"t={f}",
                 "--seeds", "0", "-p", "c_grid=1", "-o", str(tmp_path / "ds.json")])
    assert code == 0
    assert "| original | 18 | 100.0 |" in capsys.readouterr().out
