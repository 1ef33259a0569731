"""Through vllm-mlx's own serving code: its streaming chat-completion path
(``vllm_mlx.server.stream_chat_completion``: per-request parser build,
``reset_state(implicit_mode=...)``, the reasoning/tool split per delta,
``finalize_stream``, the SSE chunks) behind a scripted engine that replays
model text in pieces, as vllm-mlx's own server tests mock it.  vllm-mlx's
server imports its MLX engines at module level; MLX does not exist on Linux,
so the ``mlx*`` packages are placeholder modules here (nothing of them runs:
the engine is scripted).  Needs ``python-multipart`` (FastAPI form routes)."""
from __future__ import annotations

import asyncio
import importlib.abc
import importlib.machinery
import json
import random
import re
import sys
import types
import warnings

import pytest

pytest.importorskip("vllm_mlx.reasoning")
pytest.importorskip("multipart")
pytest.importorskip("fastapi")
M = pytest.importorskip("reasoning_core.integrations.vllm_mlx")


class _Placeholder:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Placeholder()

    def __getattr__(self, name):
        return _Placeholder()

    def __mro_entries__(self, bases):
        return (object,)

    def __or__(self, other):
        return _Placeholder()

    __ror__ = __or__

    def __getitem__(self, key):
        return _Placeholder()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False


class _MlxFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    roots = ("mlx", "mlx_lm", "mlx_vlm", "mlx_embeddings", "mlx_audio", "mlx_whisper", "parakeet_mlx")

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []

        def __getattr__(attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return _Placeholder()

        m.__getattr__ = __getattr__
        return m

    def exec_module(self, module):
        pass


def _server():
    try:
        import mlx.core  # noqa: F401 - a real MLX (macOS): nothing to stand in for
    except ImportError:
        sys.meta_path.insert(0, _MlxFinder())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic and FastAPI deprecations at import
            import vllm_mlx.server as server
    except Exception as exc:  # pragma: no cover - another vllm-mlx
        pytest.skip(f"vllm_mlx.server does not import here: {exc!r}", allow_module_level=True)
    return server


S = _server()
from vllm_mlx.api.models import ChatCompletionRequest  # noqa: E402
from vllm_mlx.engine.base import BaseEngine, GenerationOutput  # noqa: E402


class ScriptedEngine(BaseEngine):
    """Replays a fixed completion in the given pieces."""

    def __init__(self, pieces):
        super().__init__()
        self.pieces = pieces

    @property
    def model_name(self):
        return "scripted"

    @property
    def is_mllm(self):
        return False

    @property
    def tokenizer(self):
        return None

    async def start(self):
        pass

    async def stop(self):
        pass

    async def generate(self, *a, **k):  # pragma: no cover - not used
        raise NotImplementedError

    async def stream_generate(self, *a, **k):  # pragma: no cover - not used
        raise NotImplementedError
        yield

    async def chat(self, *a, **k):  # pragma: no cover - not used
        raise NotImplementedError

    async def stream_chat(self, messages=None, **kwargs):
        text = ""
        for i, piece in enumerate(self.pieces):
            text += piece
            last = i == len(self.pieces) - 1
            yield GenerationOutput(text=text, new_text=piece, tokens=[i], prompt_tokens=3, completion_tokens=i + 1,
                                   finish_reason="stop" if last else None, finished=last)


def _serve(pieces, reasoning_parser, tool_parser=None, tools=None):
    """What a client sees: (reasoning, content, tool calls, finish_reason)."""
    M.register()
    saved = (S._reasoning_parser, S._reasoning_parser_name, S._enable_auto_tool_choice, S._tool_call_parser,
             S._tool_parser_instance)
    try:
        S._reasoning_parser_name = reasoning_parser
        S._reasoning_parser = M._mlx_reasoning.get_parser(reasoning_parser)()
        S._enable_auto_tool_choice = tool_parser is not None
        S._tool_call_parser = tool_parser
        S._tool_parser_instance = None
        body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        if tools:
            body["tools"] = tools
        request = ChatCompletionRequest(**body)

        async def collect():
            out = []
            async for chunk in S.stream_chat_completion(ScriptedEngine(pieces), request.messages, request):
                out.append(chunk)
            return out

        chunks = asyncio.run(collect())
    finally:
        (S._reasoning_parser, S._reasoning_parser_name, S._enable_auto_tool_choice, S._tool_call_parser,
         S._tool_parser_instance) = saved
    reasoning, content, calls, finish = [], [], {}, None
    for raw in chunks:
        for line in raw.splitlines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            for ch in data.get("choices", []):
                d = ch.get("delta") or {}
                r = d.get("reasoning_content", d.get("reasoning"))  # vllm-mlx sends reasoning_content
                if r:
                    reasoning.append(r)
                if d.get("content"):
                    content.append(d["content"])
                for tc in d.get("tool_calls") or []:
                    slot = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                    fn = tc.get("function") or {}
                    slot["name"] += fn.get("name") or ""
                    slot["arguments"] += fn.get("arguments") or ""
                finish = ch.get("finish_reason") or finish
    parsed = [(c["name"], json.loads(c["arguments"] or "{}")) for _, c in sorted(calls.items())]
    return "".join(reasoning), "".join(content), parsed, finish


_MARKER = re.compile(r"<\|[a-z_]+\|>|<\|channel>|<channel\|>|</?think>|\[/?THINK\]")


def _pieces(text, rng):
    """Random pieces of 1-5 characters; special-token markers whole, as a
    tokenizer gives them."""
    out, pos = [], 0
    for m in list(_MARKER.finditer(text)) + [None]:
        seg = text[pos:m.start() if m else len(text)]
        i = 0
        while i < len(seg):
            n = rng.randint(1, 5)
            out.append(seg[i:i + n])
            i += n
        if m:
            out.append(m.group(0))
            pos = m.end()
    return out


OUTPUTS = {
    "qwen3": ["<think>Let me add 2 and 2.\nThat is 4.</think>\n\nThe answer is 4.",
              "Implicit reasoning here.</think>Answer.",
              "<think>a</think>\n<think>b</think>\nc",
              "<think>Still thinking when cut"],
    "deepseek_r1": ["<think>x < y</think>so y > x", "plain answer without tags"],
    "glm4": ["<think>hmm</think>ok", "no thinking at all"],
    "mistral": ["[THINK]reason[/THINK]answer"],
    "gemma4": ["<|channel>thought\nPlan it.<channel|>\nDone.", "Just content."],
    "gpt_oss": ["<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Final.<|return|>"],
    "step3p5": ["<think>step one\n</think>\nresult"],
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_streamed_response_matches_vllm_mlx(name):
    rng = random.Random(5)
    for text in OUTPUTS[name]:
        for _ in range(3):
            pieces = _pieces(text, rng)
            theirs = _serve(pieces, name)
            ours = _serve(pieces, f"rc_{name}")
            assert ours == theirs, (name, text, pieces)


TOOL_OUTPUTS = {
    "glm47": "<think>The user wants the weather.</think>\n"
             "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    "minimax": "<think>The user wants the weather.</think>\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
               "<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
}


@pytest.mark.parametrize("tool_name", sorted(TOOL_OUTPUTS))
def test_tool_call_through_the_server(tool_name):
    text = TOOL_OUTPUTS[tool_name]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    rng = random.Random(3)
    for _ in range(4):
        pieces = _pieces(text, rng)
        theirs = _serve(pieces, "qwen3", tool_name, tools)
        ours = _serve(pieces, "rc_qwen3", f"rc_{tool_name}", tools)
        assert ours[2] == [("get_weather", {"city": "Paris"})]
        assert ours == theirs, pieces


def test_register_rc_names():
    M.register()
    assert M._mlx_reasoning.get_parser("rc_qwen3") is M.REASONING_PARSERS["qwen3"]
