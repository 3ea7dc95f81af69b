"""``--config`` files: every key must be one the command reads (a misspelt key is refused, naming the nearest
known one, before any work), method parameters and LLM settings under ``params`` likewise, and a key that
would hold a secret (an API key, a token, a password) is refused at any depth without its value being shown."""

from __future__ import annotations

import pytest

from cfaug.cli import main

SECRET = "sk-proj-Zq81uVb2TtYw0mXe5KcRd3Lp"
PLAIN_SECRET = "correct horse battery staple"


@pytest.fixture
def data(tmp_path):
    f = tmp_path / "in.csv"
    f.write_text("id,text,label\na,a fine film,pos\nb,a dull plot,neg\n", encoding="utf-8")
    return f


def run(command, data, tmp_path, capsys, config_text, *extra):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(config_text, encoding="utf-8")
    out = tmp_path / "out"
    argv = {"augment": ["augment", str(data), "-o", str(out / "o.jsonl")],
            "train": ["train", "auto-cad", "--train-data", str(data), "-o", str(out / "model")],
            "compare": ["compare", str(data), "--methods", "auto-cad", "-o", str(out / "cmp")]}[command]
    code = main([*argv, "--config", str(cfg), "--no-progress", *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err, out


@pytest.mark.parametrize("command,text,named,nearest", [
    ("augment", "metod: coba\n", "metod", "method"),
    ("augment", "max_budgt: 2\n", "max_budgt", "max_budget"),
    ("augment", "text-colum: review\n", "text_colum", "text_col"),
    ("train", "seeed: 3\n", "seeed", "seed"),
    ("compare", "method: coba\n", "method", "methods"),
    ("compare", "judge_trian: other.csv\n", "judge_trian", "judge_train"),
])
def test_an_unknown_key_is_refused_naming_the_nearest_known_one(data, tmp_path, capsys, command, text, named,
                                                                nearest):
    code, err, out = run(command, data, tmp_path, capsys, text)
    assert code == 2, err
    assert f"unknown key '{named}'" in err and f"did you mean '{nearest}'?" in err and "Traceback" not in err
    assert str(tmp_path / "run.yaml") in err
    assert not out.exists()  # refused before any work


def test_an_unknown_key_without_a_near_one_lists_the_known_ones(data, tmp_path, capsys):
    code, err, _ = run("augment", data, tmp_path, capsys, "colour: red\n")
    assert code == 2 and "unknown key 'colour'" in err and "known keys: " in err and "method" in err


@pytest.mark.parametrize("text,message", [
    ("params:\n  min_similarty: 0.5\n", "min_similarty (did you mean min_similarity?)"),
    ("method: zero-shot\nllm_model: m\nllm_base_url: http://127.0.0.1:9/v1\nparams:\n  llm: {max_budgt: 1}\n",
     "max_budgt (did you mean max_budget?)"),
])
def test_a_misspelt_key_under_params_is_refused_naming_the_nearest_one(data, tmp_path, capsys, text, message):
    code, err, out = run("augment", data, tmp_path, capsys, text)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (out / "o.jsonl").exists()


def test_a_scalar_where_params_takes_a_mapping_is_refused(data, tmp_path, capsys):
    code, err, _ = run("augment", data, tmp_path, capsys, "params: fast\n")
    assert code == 2 and "params" in err and "mapping" in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["augment", "train", "compare"])
@pytest.mark.parametrize("text,where", [
    (f"llm:\n  api_key: {SECRET}\n", "llm.api_key"),
    (f"method: zero-shot\nparams:\n  llm:\n    api_key: {SECRET}\n", "params.llm.api_key"),
    (f"openai_api_key: {SECRET}\n", "openai_api_key"),
    (f"params:\n  classifier_data:\n    - {{path: x.csv, token: {SECRET}}}\n", "params.classifier_data[0].token"),
    (f"apiKey: {SECRET}\n", "apiKey"),
    (f"llm_api_key: {PLAIN_SECRET}\n", "llm_api_key"),
    (f"params:\n  llm:\n    password: {PLAIN_SECRET}\n", "params.llm.password"),
    (f"secret: {PLAIN_SECRET}\n", "secret"),
    (f"key: {PLAIN_SECRET}\n", "key"),
])
def test_a_secret_at_any_depth_is_refused_and_never_shown(data, tmp_path, capsys, command, text, where):
    code, err, out = run(command, data, tmp_path, capsys, text)
    assert code == 2, err
    assert f"{where}: do not put API keys in config files" in err and "the value is not shown" in err
    for piece in (SECRET, SECRET[:10], SECRET[-8:], PLAIN_SECRET, "battery"):
        assert piece not in err
    assert not out.exists()


@pytest.mark.usefixtures("isolated_llm_cache")
def test_the_name_of_a_key_variable_is_no_secret(data, tmp_path, capsys):
    """``llm_api_key_env`` names an environment variable: it is read, not refused."""
    code, err, _ = run("augment", data, tmp_path, capsys,
                       "method: zero-shot\nllm_api_key_env: MY_LLM_KEY\nparams:\n  llm: {api_key_env: MY_LLM_KEY}\n")
    assert "do not put API keys" not in err and "unknown key" not in err
    assert code == 2 and "llm" in err.lower()  # stopped later, for want of an LLM server and model


# ------------------------------------------------------------------ values a command cannot use: exit 2


def cli(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # (argparse)
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("seed,problem", [("-1", "-1 is below the minimum 0"),
                                          ("4294967296", "4294967296 is above the maximum 4294967295"),
                                          ("99999999999999999999", "is above the maximum 4294967295")])
@pytest.mark.parametrize("command", ["augment", "train", "compare"])
def test_a_seed_out_of_range_exits_2_before_any_work(data, tmp_path, capsys, command, seed, problem):
    out = tmp_path / "out"
    argv = {"augment": ["augment", str(data), "-o", str(out / "o.jsonl")],
            "train": ["train", "auto-cad", "--train-data", str(data), "-o", str(out / "model")],
            "compare": ["compare", str(data), "--methods", "auto-cad", "-o", str(out / "cmp")]}[command]
    code, err = cli([*argv, "--seed", seed, "--no-progress"], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert "seed" in err and problem in err
    assert not out.exists()


def test_a_seed_out_of_range_in_a_config_file_exits_2(data, tmp_path, capsys):
    code, err, out = run("augment", data, tmp_path, capsys, "seed: -5\n")
    assert code == 2 and "seed" in err and "-5 is below the minimum 0" in err and not out.exists()


@pytest.mark.parametrize("command", ["augment", "compare"])
@pytest.mark.parametrize("param", ["llm=x", "llm=", "llm=sk-proj-Zq81uVb2TtYw0mXe5KcRd3Lp"])
def test_a_single_value_where_the_llm_settings_go_exits_2(data, tmp_path, capsys, command, param):
    out = tmp_path / "out"
    argv = {"augment": ["augment", str(data), "-o", str(out / "o.jsonl"), "--method", "zero-shot"],
            "compare": ["compare", str(data), "--methods", "zero-shot", "-o", str(out / "cmp")]}[command]
    code, err = cli([*argv, "-p", param, "--no-progress"], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert "llm takes a mapping of LLM settings, not a single value" in err and SECRET not in err
    assert not out.exists()


def test_a_single_value_where_a_method_takes_a_mapping_is_refused_by_the_python_api(tmp_path):
    from cfaug.api import run_augment
    from cfaug.config import ConfigError

    rows = [{"id": "a", "text": "a fine film", "label": "pos"}]
    with pytest.raises(ConfigError, match="parameter llm of zero-shot.v1 takes a mapping"):
        run_augment(rows, "zero-shot", params={"llm": "x"}, run_dir=str(tmp_path / "run"), progress=False)
    with pytest.raises(ConfigError, match="parameter seed of the run: -1 is below the minimum 0"):
        run_augment(rows, "auto-cad", seed=-1, run_dir=str(tmp_path / "run"), progress=False)


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_the_seed_flags_of_the_other_commands_take_a_seed_too(data, tmp_path, capsys, seed):
    code, err = cli(["downstream", "--train", str(data), "--dev", str(data), "--in-domain", f"t={data}",
                     "--seeds", f"0,{seed}", "-o", str(tmp_path / "d.json")], capsys)
    assert code == 2 and f"--seeds: {seed} is not a seed: a seed is an integer from 0 to 4294967295" in err
    code, err = cli(["prompt-search", "-o", str(tmp_path / "ps"), "--judge-train", str(data), "--seed", seed],
                    capsys)
    assert code == 2 and f"argument --seed: {seed} is not a seed" in err and "Traceback" not in err
    assert not (tmp_path / "d.json").exists() and not (tmp_path / "ps").exists()
