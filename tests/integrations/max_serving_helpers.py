"""MAX 26.7's own chat-completions serving path behind a scripted model worker.

What runs is MAX's: the FastAPI app from ``max.serve.api_server.fastapi_app``
(its ``/v1/chat/completions`` route with the tool-grammar hook and
``OpenAIChatResponseGenerator``), ``TokenGeneratorPipeline.next_token_chunk``
(the per-chunk reasoning parser, detokenizers and usage counting) and MAX's
``TextTokenizer`` over a local model folder made at run time.  Only the model
worker is scripted: it records the context MAX hands it and replays token ids
in the chunks a test asks for, the way a scheduler returns them.

MAX's serving modules import packages the parser classes do not; install
them pinned into one directory and put it on ``PYTHONPATH`` (the
OpenTelemetry namespace package must be laid out by a single install)::

    pip install --no-deps --target DIR pydantic-settings==2.11.0 python-dotenv==1.2.1 \
        opentelemetry-api==1.35.0 opentelemetry-sdk==1.35.0 \
        opentelemetry-exporter-otlp-proto-http==1.35.0 opentelemetry-exporter-otlp-proto-common==1.35.0 \
        opentelemetry-proto==1.35.0 opentelemetry-semantic-conventions==0.56b0 \
        opentelemetry-exporter-prometheus==0.56b0 protobuf==6.33.5 importlib-metadata==8.7.0 \
        zipp==3.23.0 sse-starlette==2.1.3 aiofiles==24.1.0 python-json-logger==3.3.0 \
        asgiref==3.9.1 uvicorn==0.38.0
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import pytest

from sglang_max_helpers import import_max

rcm = import_max()

if importlib.util.find_spec("pydantic_settings") is None or importlib.util.find_spec("sse_starlette") is None:
    pytest.skip("MAX's serving layer needs its extras on PYTHONPATH (see max_serving_helpers.py)",
                allow_module_level=True)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import httpx
    from max.pipelines.context.outputs import TextGenerationOutput
    from max.pipelines.context.sampling_params import SamplingParamsGenerationConfigDefaults
    from max.pipelines.context.status import GenerationStatus
    from max.pipelines.lib import reasoning as max_reasoning
    from max.pipelines.lib import tool_parsing as max_tools
    from max.pipelines.lib.config.config import PipelineConfig
    from max.pipelines.lib.pipeline_runtime_config import PipelineRuntimeConfig
    from max.pipelines.lib.tokenizer import TextTokenizer
    from max.pipelines.sampling.sampling_config import SamplingConfig
    from max.serve.api_server import ServingTokenGeneratorSettings, fastapi_app
    from max.serve.config import Settings
    from max.serve.pipelines.llm import TokenGeneratorPipeline
    from max.serve.worker_interface import ModelWorkerProxy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/vocab.py

ARCHITECTURES = {
    "deepseekv4": "deepseekV4", "gemma4": "gemma4", "glm45": "glm5_1", "inkling": "inkling",
    "kimik2_5": "kimik2_5", "laguna": "laguna", "minimax_m2": "minimax_m2", "muse_glimmer": "muse_glimmer",
    "qwen3_5": "qwen3_5",
}


def load_max_parsers() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arch in ARCHITECTURES.values():
            importlib.import_module(f"max.pipelines.architectures.{arch}.reasoning")
        rcm._native_tool_classes()
    rcm.register()


class ScriptedWorker(ModelWorkerProxy):
    """Replays a script of token-id chunks for each request; records what MAX sends."""

    def __init__(self) -> None:
        self.script: list[list[int]] = []
        self.final = GenerationStatus.END_OF_SEQUENCE
        self.contexts: list[Any] = []

    async def stream(self, req_id, data):
        self.contexts.append(data)
        script, final = list(self.script), self.final

        async def gen():
            for i, chunk in enumerate(script):
                status = final if i == len(script) - 1 else GenerationStatus.ACTIVE
                yield [TextGenerationOutput(request_id=req_id, tokens=list(chunk), final_status=status)], i
        return gen()

    def cancel(self, req_id) -> None:
        pass


@dataclass
class Served:
    """One MAX app: a model folder, its tokenizer and the scripted worker."""

    app: Any
    worker: ScriptedWorker
    tokenizer: Any
    config: Any


def model_folder(specials: tuple[str, ...], template: str, eos: str, added: tuple[str, ...] = ()) -> Path:
    """``specials``: special tokens (MAX's detokenizer skips them); ``added``:
    single-token markers that stay in the decoded text (as ``<think>`` and
    ``<tool_call>`` are in Qwen's vocabulary)."""
    from tokenizers import AddedToken
    from vocab import build_tokenizer, scratch_dir

    d = scratch_dir("max-serving-")
    tok = build_tokenizer(tuple(dict.fromkeys(specials + (eos,))))
    if added:
        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in added])
    tok.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos, "chat_template": template,
        "model_max_length": 1 << 16}))
    return d


def serve(folder: Path, reasoning: Optional[str], tool: Optional[str]) -> Served:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runtime = PipelineRuntimeConfig(reasoning_parser=reasoning, tool_parser=tool)
        config = PipelineConfig.model_construct(
            runtime=runtime, sampling=SamplingConfig(structured_output_backend="xgrammar"), speculative=None, lora=None,
            models={"main": SimpleNamespace(sampling_params_defaults=SamplingParamsGenerationConfigDefaults(), model_path=str(folder))})
        tokenizer = TextTokenizer(str(folder), None)
        settings = Settings(disable_telemetry=True)
        # MAX's app binds its control sockets under the temp directory when it
        # is built: there, the model's folder (removed with the scratch folder).
        saved, tempfile.tempdir = tempfile.tempdir, str(folder)
        try:
            app = fastapi_app(settings, ServingTokenGeneratorSettings(
                model_factory=None, pipeline_config=config, tokenizer=tokenizer, reasoning_parser_name=reasoning))
        finally:
            tempfile.tempdir = saved
    worker = ScriptedWorker()
    app.state.pipeline = TokenGeneratorPipeline(model_name="m", tokenizer=tokenizer, lora_queue=None,
                                                model_worker=worker, reasoning_parser_name=reasoning)
    app.state.pipeline_config = config
    app.state.task = None
    return Served(app, worker, tokenizer, config)


# One event loop for every request (sse-starlette binds its exit event to the
# first loop it runs in).
_LOOP = asyncio.new_event_loop()


async def _post(app, body: dict) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://max") as client:
        return await client.post("/v1/chat/completions", json=body, timeout=60)


def chat(served: Served, body: dict, script: list[list[int]],
         final: GenerationStatus = GenerationStatus.END_OF_SEQUENCE) -> dict:
    """One request through MAX's route; the response folded into one message
    (streamed deltas concatenated), with usage and finish_reason."""
    served.worker.script, served.worker.final = script, final
    r = _LOOP.run_until_complete(_post(served.app, body))
    if r.status_code != 200:
        return {"status": r.status_code, "error": r.text[:300]}
    if not body.get("stream"):
        data = r.json()
        ch = data["choices"][0]
        msg = ch["message"]
        return {"reasoning": msg.get("reasoning_content") or msg.get("reasoning"), "content": msg.get("content"),
                "tool_calls": _calls(msg.get("tool_calls") or []), "finish": ch.get("finish_reason"),
                "usage": _usage(data.get("usage"))}
    reasoning, content, calls, finish, usage = [], [], {}, None, None
    for line in r.text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        data = json.loads(line[6:])
        if data.get("usage"):
            usage = _usage(data["usage"])
        for ch in data.get("choices") or []:
            d = ch.get("delta") or {}
            if d.get("reasoning_content") or d.get("reasoning"):
                reasoning.append(d.get("reasoning_content") or d.get("reasoning"))
            if d.get("content"):
                content.append(d["content"])
            for tc in d.get("tool_calls") or []:
                c = calls.setdefault(tc["index"], {"name": "", "arguments": "", "id": None})
                fn = tc.get("function") or {}
                c["name"] += fn.get("name") or ""
                c["arguments"] += fn.get("arguments") or ""
                c["id"] = c["id"] or tc.get("id")
            if ch.get("finish_reason"):
                finish = ch["finish_reason"]
    tool_calls = _calls([{"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
                         for _, c in sorted(calls.items())])
    return {"reasoning": "".join(reasoning) or None, "content": "".join(content) or None,
            "tool_calls": tool_calls, "finish": finish, "usage": usage}


def _calls(calls: list) -> list:
    out = []
    for c in calls:
        fn = c.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "null")
        except ValueError:
            args = ("unparsed", fn.get("arguments"))
        out.append((fn.get("name"), args, bool(c.get("id"))))
    return out


def _usage(u: Optional[dict]) -> Optional[tuple]:
    if not u:
        return None
    details = u.get("completion_tokens_details") or {}
    return (u.get("prompt_tokens"), u.get("completion_tokens"), details.get("reasoning_tokens"))
