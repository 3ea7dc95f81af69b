"""Local Hugging Face model by path: batched generation with padding, the model's chat template when it
has one, on CPU or GPU. Nothing is downloaded (``local_files_only``).

Chat requests are formatted with the tokenizer's chat template; a model without one gets a plain
``System: ... / User: ... / Assistant:`` transcript. Decoder-only models are padded on the left so every
row of a batch continues its own prompt; greedy decoding (temperature 0) gives the same answer whatever
the batch. When sampling, one seed (the first request's) is set per batch, so sampled answers depend on
how requests were batched; the request cache makes reruns repeat them exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cfaug.llm.backends.base import BACKENDS
from cfaug.llm.backends.batching import BatchingBackend, cut_at_stop
from cfaug.llm.errors import LLMConfigError
from cfaug.llm.redact import redact_secrets
from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Completion, Request

DEFAULT_MAX_NEW_TOKENS = 256
_DTYPES = ("float32", "float16", "bfloat16", "auto")


@BACKENDS.register("transformers.v1", "local Hugging Face model folder, batched generation on CPU or GPU")
class TransformersBackend(BatchingBackend):
    kind = "transformers"

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings)
        self.path = Path(settings.model).expanduser()
        if settings.dtype is not None and settings.dtype not in _DTYPES:
            raise LLMConfigError(f"llm dtype must be one of {', '.join(_DTYPES)}, got {settings.dtype!r}")
        self.tokenizer: Any = None
        self.model_obj: Any = None
        self.device = ""
        self.encoder_decoder = False

    @property
    def model_id(self) -> str:
        return str(self.path.resolve())

    @property
    def public_model(self) -> str:
        """The model folder's base name (its path stays in the run manifest)."""
        return self.path.resolve().name

    def load(self) -> None:
        if not self.path.is_dir():
            raise LLMConfigError(f"local model {self.settings.model}: no such folder")
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        from cfaug.local_models import quiet_transformers

        quiet_transformers()
        try:
            config = AutoConfig.from_pretrained(self.path, local_files_only=True)
            self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise LLMConfigError(f"local model {self.settings.model}: cannot load: {redact_secrets(str(exc))}") from exc
        self.encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
        self.device = self.settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype: Any = self.settings.dtype or ("float32" if self.device == "cpu" else "auto")
        if dtype != "auto":
            dtype = getattr(torch, dtype)
        cls = AutoModelForSeq2SeqLM if self.encoder_decoder else AutoModelForCausalLM
        try:
            model = cls.from_pretrained(self.path, local_files_only=True, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise LLMConfigError(f"local model {self.settings.model}: cannot load: {redact_secrets(str(exc))}") from exc
        self.model_obj = model.to(self.device).eval()
        tok = self.tokenizer
        tok.padding_side = "right" if self.encoder_decoder else "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token if tok.eos_token is not None else tok.unk_token
        if tok.pad_token is None:
            raise LLMConfigError(f"local model {self.settings.model}: the tokenizer has no pad, eos or unk token")

    # -- prompt formatting ---------------------------------------------------------------------------
    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def format(self, request: Request) -> tuple[str, bool]:
        """The prompt text and whether it already holds the special tokens (chat templates add them)."""
        if request.messages is None:
            return request.prompt or "", False
        if self.has_chat_template:
            text = self.tokenizer.apply_chat_template(list(request.messages), tokenize=False,
                                                      add_generation_prompt=True)
            return text, True
        lines = [f"{m['role'].capitalize()}: {m['content']}" for m in request.messages]
        return "\n\n".join(lines) + "\n\nAssistant:", False

    # -- generation ----------------------------------------------------------------------------------
    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        import torch

        tok, model = self.tokenizer, self.model_obj
        formatted = [self.format(r) for r in requests]
        templated = formatted[0][1]
        enc = tok([t for t, _ in formatted], return_tensors="pt", padding=True, add_special_tokens=not templated)
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        max_new = max(r.max_tokens or DEFAULT_MAX_NEW_TOKENS for r in requests)
        params = requests[0].params
        gen: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": tok.pad_token_id}
        temperature = float(params.get("temperature") or 0.0)
        if temperature > 0:
            gen.update(do_sample=True, temperature=temperature, top_p=float(params.get("top_p") or 1.0))
            if params.get("top_k"):
                gen["top_k"] = int(params["top_k"])
            torch.manual_seed(int(requests[0].seed or 0) % (2 ** 63))
        else:
            gen["do_sample"] = False
        if params.get("repetition_penalty"):
            gen["repetition_penalty"] = float(params["repetition_penalty"])
        with torch.inference_mode():
            out = model.generate(**enc, **gen)
        new_tokens = out[:, 1:] if self.encoder_decoder else out[:, enc["input_ids"].shape[1]:]
        eos = _eos_ids(model, tok)
        results = []
        for i, r in enumerate(requests):
            ids = new_tokens[i].tolist()
            finish = "length"
            for j, t in enumerate(ids):
                if t in eos:
                    ids, finish = ids[:j], "stop"
                    break
            limit = r.max_tokens or DEFAULT_MAX_NEW_TOKENS
            if len(ids) > limit:
                ids, finish = ids[:limit], "length"
            ids = [t for t in ids if t != tok.pad_token_id]
            text = tok.decode(ids, skip_special_tokens=True)
            stopped = cut_at_stop(text, r.params.get("stop"))
            if stopped != text:
                text, finish = stopped, "stop"
            results.append(Completion(text=text.strip(), tokens_in=int(enc["attention_mask"][i].sum()),
                                      tokens_out=len(ids), finish_reason=finish, model=self.settings.model))
        return results

    def close(self) -> None:
        self.model_obj = None


def _eos_ids(model: Any, tok: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), getattr(model, "config", None)):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    if tok.eos_token_id is not None:
        ids.add(int(tok.eos_token_id))
    return ids
