"""What every ``cfaug`` parser shares: no abbreviated options, no API key as an option, no key echoed in an
error message, and error messages of bounded length."""

from __future__ import annotations

import pytest

from cfaug.cli import MESSAGE_CHARS, build_parser, command_parsers, main

KEY = "sk-proj-Zq81uVb2TtYw0mXe5KcRd3Lp"


def pieces(secret: str) -> list[str]:
    """The secret and recognisable parts of it."""
    return [secret, secret[:10], secret[-8:], secret[8:20]]


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of ``cfaug argv`` (argparse errors exit through SystemExit)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def assert_hidden(text: str, secret: str = KEY) -> None:
    for piece in pieces(secret):
        assert piece not in text, f"{piece!r} leaked into {text!r}"


def test_no_parser_accepts_abbreviations():
    root = build_parser()
    parsers = [((), root), *command_parsers(root)]
    assert len(parsers) > 12  # every command, and the subcommands of review
    for path, parser in parsers:
        assert parser.allow_abbrev is False, path


def test_a_prefix_of_an_option_is_an_unknown_option(capsys, tmp_path):
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--llm-api-key-e", "MY_KEY"], capsys)
    assert code == 2 and "unrecognized arguments: --llm-api-key-e" in err


@pytest.mark.parametrize("argv", [["--llm-api-key", KEY], [f"--llm-api-key={KEY}"], ["--api-key", KEY],
                                  ["--openai-api-key", KEY]])
def test_an_api_key_option_is_refused_without_showing_the_key(capsys, tmp_path, argv):
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), *argv], capsys)
    flag = argv[0].split("=")[0]
    assert code == 2
    assert f"{flag} is not an option" in err and "--llm-api-key-env" in err and "name" in err
    assert_hidden(err)
    assert not (tmp_path / "in.tsv.run").exists()


#: a secret that does not look like a key: only where it stands on the command line tells what it is
PLAIN_SECRET = "hunter2-Pa55w0rd"


@pytest.mark.parametrize("argv", [
    ["augment", "IN", "--llm-api-ke", PLAIN_SECRET], ["augment", "IN", "--llm-api-key-e", PLAIN_SECRET],
    ["augment", "IN", "--llm-api-keyenv", PLAIN_SECRET], ["augment", "IN", f"--llm-api-keyenv={PLAIN_SECRET}"],
    ["augment", "IN", f"--llm-apikey={PLAIN_SECRET}"], ["augment", "IN", "--hf-tokn", PLAIN_SECRET],
    ["augment", "IN", f"--llm-auth-header={PLAIN_SECRET}"], ["augment", "IN", "--llm-passwd", PLAIN_SECRET],
    ["augment", "IN", "--my-secret", PLAIN_SECRET, "--llm-model", "m"],
    ["augment", "--llm-api-ke", PLAIN_SECRET, "IN"],  # the value taken for the input, the input left over
    ["--llm-api-ke", PLAIN_SECRET, "augment", "IN"],  # the value taken for the command: an invalid choice
    ["llm", "--llm-api-ke", PLAIN_SECRET],
])
def test_the_value_after_an_unknown_key_like_option_is_never_shown(capsys, tmp_path, argv):
    argv = [str(tmp_path / "in.tsv") if a == "IN" else a for a in argv]
    code, err = run_cli(argv, capsys)
    assert code == 2 and "error:" in err
    assert PLAIN_SECRET not in err and "hunter2" not in err and "Pa55w0rd" not in err
    unknown = next(a for a in argv if a.startswith("--")).split("=")[0]
    if argv[0] != "augment":  # argparse took the value for a command name
        assert "invalid choice: '[redacted]'" in err
    else:
        assert unknown in err  # the option itself is named (unrecognized, or refused as a key option)


def test_other_unknown_options_keep_their_values_in_the_message(capsys, tmp_path):
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--llm-mdoel", "my-model"], capsys)
    assert code == 2 and "unrecognized arguments: --llm-mdoel my-model" in err


def test_a_key_given_as_the_variable_name_is_refused_without_showing_it(capsys, tmp_path):
    for argv in (["--llm-api-key-env", KEY], [f"--llm-api-key-env={KEY}"]):
        code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--method", "zero-shot", *argv], capsys)
        assert code == 2 and "--llm-api-key-env" in err
        assert "takes the name of the environment variable" in err and "not the key itself" in err
        assert_hidden(err)
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--llm-api-key-env", "my key"], capsys)
    assert code == 2 and "got 'my key', which is not a variable name" in err  # not a key: shown


def test_a_key_as_the_variable_name_in_a_config_file_is_refused_without_showing_it(capsys, tmp_path):
    data = tmp_path / "in.tsv"
    data.write_text("Text\tSentiment\nA good film.\tpositive\n", encoding="utf-8")
    for text in (f"method: zero-shot\nllm_api_key_env: {KEY}\n",
                 f"method: zero-shot\nparams:\n  llm: {{api_key_env: {KEY}}}\n"):
        cfg = tmp_path / "run.yaml"
        cfg.write_text(text, encoding="utf-8")
        code, err = run_cli(["augment", str(data), "-o", str(tmp_path / "out.jsonl"), "--config", str(cfg),
                             "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"], capsys)
        assert code == 2 and "takes the name of the environment variable" in err
        assert_hidden(err)


def test_a_key_in_any_other_usage_error_is_masked(capsys, tmp_path):
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--max-budget", KEY], capsys)
    assert code == 2 and "argument --max-budget: invalid float value" in err
    assert_hidden(err)


def test_a_huge_usage_error_is_cut(capsys, tmp_path):
    code, err = run_cli(["augment", str(tmp_path / "in.tsv"), "--unknown", "x" * 100_000], capsys)
    assert code == 2 and "unrecognized arguments" in err and len(err) < MESSAGE_CHARS + 1000
