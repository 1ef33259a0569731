"""vLLM's own chat-completions serving path behind a scripted engine core.

``ServingHarness`` runs vLLM 0.33's ``AsyncLLM`` (its ``InputProcessor``,
``OutputProcessor`` and incremental detokenizer), ``init_app_state`` and
``OpenAIServingChat`` for a local model folder made at run time (a tiny
Qwen2 ``config.json``, a small byte-level BPE whose special tokens are every
family's markers, a chat template).  Only the engine core is replaced: a
scripted client that answers each request with the token ids it was given,
``k`` ids per engine step, the last step carrying the finish reason (the way
vLLM's ``tests/entrypoints`` put a mock engine behind the real frontend).

A response is reduced to what a client reads: the reasoning field, content,
tool calls (name and parsed arguments), finish reason and usage (with
``completion_tokens_details.reasoning_tokens``), streamed or one-shot.
"""
from __future__ import annotations

import asyncio
import copy
import json
import os
import tempfile
import time
import types
import warnings
from dataclasses import dataclass
from typing import Any, Optional

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if prompt_suffix is defined %}{{ prompt_suffix }}{% endif %}{% endif %}"
)
EOS = "<|im_end|>"


def union_specials() -> tuple[str, ...]:
    from vocab import FAMILY_SPECIALS

    return tuple(dict.fromkeys(s for v in FAMILY_SPECIALS.values() for s in v))


def make_model_dir(specials: tuple[str, ...]) -> tuple[str, Any]:
    """A model folder vLLM's config and tokenizer loaders accept, offline."""
    from vocab import build_tokenizer, scratch_dir

    tok = build_tokenizer(specials)
    d = str(scratch_dir("vllm-serving-"))
    tok.save(os.path.join(d, "tokenizer.json"))
    vocab = tok.get_vocab_size()
    eos = tok.token_to_id(EOS)
    config = {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 4,
        "vocab_size": vocab, "max_position_embeddings": 8192, "eos_token_id": eos, "torch_dtype": "float32",
        "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": True,
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": CHAT_TEMPLATE,
                   "eos_token": EOS, "model_max_length": 8192}, f)
    return d, tok


class ScriptedCore:
    """Stands where vLLM's engine-core client stands: each added request is
    answered with the next script's ids, ``k`` per step."""

    engine_ranks_managed = [0]
    yields = 8  # event-loop turns given to the serving loop per step (so no two steps merge)

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.resources = types.SimpleNamespace(engine_dead=False)
        self.script: Optional[tuple[list[int], list[int], Any]] = None
        self.requests: list[Any] = []

    async def add_request_async(self, request) -> None:
        from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs

        assert self.script is not None, "no script for this request"
        ids, sizes, finish = self.script
        self.script = None
        self.requests.append(request)
        pos = 0
        for n, size in enumerate(sizes):
            last = n == len(sizes) - 1
            out = EngineCoreOutput(request_id=request.request_id, new_token_ids=list(ids[pos:pos + size]),
                                   finish_reason=finish if last else None)
            pos += size
            self.queue.put_nowait(EngineCoreOutputs(outputs=[out], timestamp=time.monotonic()))

    async def get_output_async(self):
        out = await self.queue.get()
        for _ in range(self.yields):  # let the serving loop take the previous step first (no merged steps)
            await asyncio.sleep(0)
        return out

    async def abort_requests_async(self, request_ids) -> None:
        return None

    async def get_supported_tasks_async(self):
        return ("generate",)

    def shutdown(self, *args, **kwargs) -> None:
        return None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        async def _noop(*args, **kwargs):
            return None

        return _noop


@dataclass(frozen=True)
class Reply:
    """What a client reads from one response."""

    reasoning: Optional[str]
    content: Optional[str]
    tool_calls: tuple
    finish_reason: Optional[str]
    usage: tuple
    usage_steps: tuple = ()  # reasoning_tokens of each chunk (stream_options.continuous_usage_stats)

    def short(self) -> str:
        return repr(self)[:600]


class ServingHarness:
    def __init__(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._setup()

    def _setup(self) -> None:
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.entrypoints.common.cli_args import make_arg_parser
        from vllm.usage.usage_lib import UsageContext
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        from vllm.v1.engine import core_client
        from vllm.v1.engine.async_llm import AsyncLLM

        self.model_dir, self.tok = make_model_dir(union_specials())
        parser = make_arg_parser(FlexibleArgumentParser())
        self.args = parser.parse_args([self.model_dir, "--max-model-len", "8192", "--enable-auto-tool-choice"])
        self.args.model = self.model_dir
        config = AsyncEngineArgs.from_cli_args(self.args).create_engine_config(
            usage_context=UsageContext.OPENAI_API_SERVER)
        self.loop = asyncio.new_event_loop()
        self.core = ScriptedCore.__new__(ScriptedCore)
        make = core_client.EngineCoreClient.make_async_mp_client

        def scripted(*args, **kwargs):
            return self.core

        core_client.EngineCoreClient.make_async_mp_client = staticmethod(scripted)
        try:
            async def build():
                ScriptedCore.__init__(self.core)
                return AsyncLLM.from_vllm_config(vllm_config=config, usage_context=UsageContext.OPENAI_API_SERVER,
                                                 enable_log_requests=False, disable_log_stats=True)

            self.llm = self.loop.run_until_complete(build())
        finally:
            core_client.EngineCoreClient.make_async_mp_client = make
        self._servers: dict[tuple, Any] = {}
        self.eos_id = self.tok.token_to_id(EOS)

    def close(self) -> None:
        try:
            self.loop.run_until_complete(asyncio.sleep(0))
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.run_until_complete(asyncio.sleep(0))
        finally:
            self.loop.close()

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False).ids)

    def server(self, reasoning: Optional[str], tool: Optional[str]):
        key = (reasoning, tool)
        srv = self._servers.get(key)
        if srv is None:
            from starlette.datastructures import State
            from vllm.entrypoints.launchers.api_server.app_state import init_app_state

            args = copy.copy(self.args)
            args.structured_outputs_config = copy.copy(self.args.structured_outputs_config)
            args.structured_outputs_config.reasoning_parser = reasoning or ""
            args.tool_call_parser = tool
            state = State()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.loop.run_until_complete(init_app_state(self.llm, state, args, ("generate",)))
            srv = self._servers[key] = state.openai_serving_chat
        return srv

    def chat(self, reasoning: Optional[str], tool: Optional[str], ids: list[int], sizes: list[int], *,
             finish: str = "stop", stream: bool, chat_template_kwargs: Optional[dict] = None,
             tools: Optional[list] = None, max_tokens: Optional[int] = None,
             skip_special_tokens: Optional[bool] = None, continuous_usage: bool = False) -> Reply:
        """One request through vLLM's chat-completions handler; ``ids`` are
        the engine's output (with the EOS id for ``finish="stop"``)."""
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.v1.engine import FinishReason

        srv = self.server(reasoning, tool)
        body: dict[str, Any] = {"model": self.model_dir, "messages": [{"role": "user", "content": "hi"}],
                                "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True, "continuous_usage_stats": continuous_usage}
        if chat_template_kwargs:
            body["chat_template_kwargs"] = dict(chat_template_kwargs)
        if tools:
            body["tools"] = tools
        if max_tokens:
            body["max_tokens"] = max_tokens
        if skip_special_tokens is not None:
            body["skip_special_tokens"] = skip_special_tokens
        request = ChatCompletionRequest(**body)
        self.core.script = (list(ids), list(sizes), FinishReason.STOP if finish == "stop" else FinishReason.LENGTH)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return self.loop.run_until_complete(self._run(srv, request, stream))
            except Exception as exc:  # the server would answer 500
                self.core.script = None
                return Reply("ERROR", type(exc).__name__, (), None, ())

    async def _run(self, srv, request, stream: bool) -> Reply:
        result = await srv.create_chat_completion(request, None)
        if not stream:
            if not hasattr(result, "choices"):
                return Reply("ERROR", str(result)[:300], (), None, ())
            data = json.loads(result.model_dump_json())
            msg = data["choices"][0]["message"]
            calls = tuple((c["function"]["name"], _args(c["function"]["arguments"])) for c in msg.get("tool_calls") or ())
            return Reply(msg.get("reasoning"), msg.get("content"), calls, data["choices"][0]["finish_reason"],
                         _usage(data.get("usage")))
        if not hasattr(result, "__aiter__"):
            return Reply("ERROR", str(result)[:300], (), None, ())
        reasoning: list[str] = []
        content: list[str] = []
        calls: dict[int, list[str]] = {}
        finish = None
        usage: tuple = ()
        steps: list = []
        saw_r = saw_c = False
        async for chunk in result:
            chunk = chunk.strip()
            if not chunk.startswith("data: ") or chunk == "data: [DONE]":
                continue
            data = json.loads(chunk[6:])
            if "error" in data:
                return Reply("ERROR", str(data)[:300], (), None, ())
            if data.get("usage"):
                usage = _usage(data["usage"])
                if data.get("choices"):
                    steps.append(usage[2])
            for ch in data.get("choices") or ():
                d = ch.get("delta") or {}
                if d.get("reasoning") is not None:
                    saw_r = True
                    reasoning.append(d["reasoning"])
                if d.get("content") is not None:
                    saw_c = True
                    content.append(d["content"])
                for tc in d.get("tool_calls") or ():
                    slot = calls.setdefault(tc.get("index", 0), ["", ""])
                    fn = tc.get("function") or {}
                    slot[0] += fn.get("name") or ""
                    slot[1] += fn.get("arguments") or ""
                if ch.get("finish_reason"):
                    finish = ch["finish_reason"]
        merged = tuple((n, _args(a)) for _, (n, a) in sorted(calls.items()))
        return Reply("".join(reasoning) if saw_r else None, "".join(content) if saw_c else None, merged, finish,
                     usage, tuple(steps))


def _args(text: str):
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return ("unparsed", text)


def _usage(u) -> tuple:
    if not u:
        return ()
    details = u.get("completion_tokens_details") or {}
    return (u.get("prompt_tokens"), u.get("completion_tokens"), details.get("reasoning_tokens"))
