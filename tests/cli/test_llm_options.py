"""The --llm-* flags of ``cfaug augment`` and their config-file twins."""

from __future__ import annotations

import pytest

from cfaug.cli import CliError, build_parser
from cfaug.cli.llm_options import llm_params_from_args
from cfaug.cli.run_options import run_options_from


def params_and_args(argv):
    args = build_parser().parse_args(["augment", "in.tsv", *argv])
    params: dict = {}
    llm_params_from_args(args, params)
    return params, args


def params_for(argv):
    return params_and_args(argv)[0]


def test_flags_become_the_llm_parameter():
    params, args = params_and_args(["--llm-base-url", "http://a:1/v1", "--llm-base-url", "http://b:2/v1,http://c:3/v1",
                         "--llm-model", "m", "--concurrency", "32", "--no-cache", "--refresh", "--max-budget", "5",
                         "--rpm", "600", "--tpm", "90000", "--request-timeout", "30", "--max-retries", "2",
                         "--cache-dir", "/tmp/c", "--price-table", "p.yaml", "--llm-api-key-env", "MY_KEY",
                         "--llm-backend", "openai", "--llm-api", "completions"])
    assert params["llm"] == {
        "backend": "openai", "base_url": ["http://a:1/v1", "http://b:2/v1,http://c:3/v1"], "model": "m",
        "api": "completions", "api_key_env": "MY_KEY", "cache_dir": "/tmp/c", "cache": False,
        "refresh": True, "max_budget": 5.0, "price_table": "p.yaml", "rpm": 600.0, "tpm": 90000.0,
        "request_timeout": 30.0, "max_retries": 2}
    # --concurrency is a run option now, not an LLM setting
    assert run_options_from(args, {})["concurrency"] == 32


def test_no_llm_option_leaves_params_alone():
    assert params_for([]) == {}


def test_config_file_carries_the_same_options_and_flags_win(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("method: zero-shot\nllm_base_url: http://from-file:8000/v1\nllm_model: file-model\n"
                   "concurrency: 4\nno_cache: true\nparams:\n  llm: {max_retries: 1}\n")
    args = build_parser().parse_args(["augment", "in.tsv", "--config", str(cfg), "--llm-model", "flag-model"])
    from cfaug.cli.options import load_config_file
    file_options = load_config_file(str(cfg))
    params = dict(file_options["params"])
    llm_params_from_args(args, params)
    assert params["llm"] == {"base_url": "http://from-file:8000/v1", "model": "flag-model",
                             "cache": False, "max_retries": 1}
    # the file's concurrency is the run option of the same name (concurrency is not an LLM setting any more)
    assert run_options_from(args, file_options)["concurrency"] == 4
    flagged = build_parser().parse_args(["augment", "in.tsv", "--config", str(cfg), "--concurrency", "8"])
    assert run_options_from(flagged, file_options)["concurrency"] == 8  # the flag wins


def test_keys_in_config_files_are_refused(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("llm_api_key: sk-123\n")
    args = build_parser().parse_args(["augment", "in.tsv", "--config", str(cfg)])
    with pytest.raises(CliError, match="do not put API keys in config files"):
        llm_params_from_args(args, {})
