"""vLLM offline engine (``pip install cfaug[vllm]``): the model runs inside this process on the GPU.

Untested in cfaug's own test suite: vLLM cannot be installed where the tests run. The code follows the
documented ``vllm.LLM.chat`` / ``vllm.LLM.generate`` API; a served vLLM (``vllm serve``) through the
``openai`` backend is the tested way to use vLLM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cfaug.llm.backends.base import BACKENDS
from cfaug.llm.backends.batching import BatchingBackend
from cfaug.llm.backends.transformers_local import DEFAULT_MAX_NEW_TOKENS
from cfaug.llm.errors import LLMConfigError
from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Completion, Request


@BACKENDS.register("vllm.v1", "vLLM offline engine in this process (optional extra 'vllm'; untested here)")
class VLLMBackend(BatchingBackend):
    kind = "vllm"

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings)
        self.engine: Any = None

    @property
    def public_model(self) -> str | None:
        """A local model folder's base name (its path stays in the run manifest); None for a hub name."""
        path = Path(self.settings.model).expanduser()
        return path.resolve().name if path.exists() else None

    def load(self) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise LLMConfigError("the vllm backend needs the vllm package: pip install 'cfaug[vllm]'") from exc
        kwargs: dict[str, Any] = {"model": self.settings.model}
        if self.settings.dtype:
            kwargs["dtype"] = self.settings.dtype
        self.engine = vllm.LLM(**kwargs)

    def generate_batch(self, requests: list[Request]) -> list[Completion]:
        from vllm import SamplingParams

        sampling = []
        for r in requests:
            p = r.params
            sampling.append(SamplingParams(
                temperature=float(p.get("temperature") or 0.0), top_p=float(p.get("top_p") or 1.0),
                max_tokens=r.max_tokens or DEFAULT_MAX_NEW_TOKENS, seed=r.seed, stop=p.get("stop")))
        if requests[0].messages is not None:
            outputs = self.engine.chat([list(r.messages or ()) for r in requests], sampling, use_tqdm=False)
        else:
            outputs = self.engine.generate([r.prompt or "" for r in requests], sampling, use_tqdm=False)
        results = []
        for out in outputs:
            best = out.outputs[0]
            results.append(Completion(text=best.text.strip(), tokens_in=len(out.prompt_token_ids or ()),
                                      tokens_out=len(best.token_ids), finish_reason=best.finish_reason,
                                      model=self.settings.model))
        return results

    def close(self) -> None:
        self.engine = None
