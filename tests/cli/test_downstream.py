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


def test_downstream_opinion_summarization(tmp_path, capsys):
    dishes = ("pizza", "soup", "pasta", "salad", "steak", "fries")
    pos = [f"the {d} was {a} ." for d in dishes for a in ("great", "good", "lovely")]
    neg = [f"the {d} was {a} ." for d in dishes for a in ("awful", "bad", "cold")]
    train = write(tmp_path / "corpus.tsv", [(t, "positive") for t in pos] + [(t, "negative") for t in neg[:2]])
    aug = write(tmp_path / "negatives.tsv", [(t, "negative") for t in neg[2:]])
    judge = write(tmp_path / "judge.tsv", [(t, "positive") for t in pos] + [(t, "negative") for t in neg])
    groups = tmp_path / "groups.csv"
    groups.write_text("group_id,rev1,rev2,summ1\n"
                      "g1,The soup was awful. The pasta was bad.,The steak was cold.,The food was bad.\n"
                      "g2,The pizza was great.,The salad was lovely. The fries were good.,The food was great.\n",
                      encoding="utf-8")
    out, md = tmp_path / "sum.json", tmp_path / "sum.md"
    tiny = ["-p", "embedding_dim=16", "-p", "hidden_size=32", "-p", "latent=8", "-p", "epochs=3", "-p", "min_count=1",
            "-p", "batch_size=8", "-p", "kl_anneal_steps=5", "-p", "free_bits=4"]
    args = ["downstream", "--task", "opinion-summarization", "--train", train, "--augment", f"lass={aug}",
            "--groups", str(groups), "--judge-train", judge, "--seeds", "0,1", "-o", str(out), "--markdown", str(md)]
    assert main(args + tiny) == 0
    table = capsys.readouterr().out
    assert table.startswith("| training data | texts | negative precision") and "| original + lass | 36 |" in table
    assert md.read_text(encoding="utf-8").strip() == table.strip()
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["groups"] == 2 and res["negative_groups"] == 1 and res["seeds"] == [0, 1]
    assert res["select"] == "overlap" and res["settings"]["epochs"] == 3
    row = res["conditions"]["original + lass"]
    assert row["texts"] == 36 and len(row["runs"]) == 2 and 0 <= row["mean"]["rougeL"] <= 100
    assert set(res["sources"]) == {"original", "lass", "judge", "groups"} and res["sources"]["lass"]["sha256"]
    # the summarizers are kept per condition and seed; a second run reuses them and gives the same scores
    assert (tmp_path / "sum.models" / "1" / "seed1" / "summarizer.pt").exists()
    assert main(args + tiny) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["conditions"] == res["conditions"]


def test_downstream_opinion_summarization_errors(tmp_path, capsys):
    f = write(tmp_path / "a.tsv", [("good", "positive"), ("bad", "negative")])
    base = ["downstream", "--task", "opinion-summarization", "--train", f]
    assert main(base + ["--judge-train", f]) == 2
    assert "needs --groups" in capsys.readouterr().err
    assert main(base + ["--groups", f]) == 2
    assert "needs --judge-train" in capsys.readouterr().err
    assert main(base + ["--groups", f, "--judge-train", f, "-p", "layers=2"]) == 2
    assert "unknown summarizer setting 'layers'" in capsys.readouterr().err
    assert main(base + ["--groups", f, "--judge-train", f, "-p", "epochs=two"]) == 2
    assert "-p epochs expects a int" in capsys.readouterr().err
    assert main(base + ["--groups", f, "--judge-train", f]) == 2
    assert "a.tsv: not a MeanSum" in capsys.readouterr().err
    # the classification tasks still need their dev set, and the two kinds of flags are not mixed
    assert main(["downstream", "--train", f, "--in-domain", f"x={f}"]) == 2
    assert "needs --dev" in capsys.readouterr().err
    assert main(base + ["--groups", f, "--judge-train", f, "--dev", f]) == 2
    assert "does not use --dev" in capsys.readouterr().err
    assert main(["downstream", "--train", f, "--dev", f, "--in-domain", f"x={f}", "--groups", f]) == 2
    assert "--groups: only for --task opinion-summarization" in capsys.readouterr().err
