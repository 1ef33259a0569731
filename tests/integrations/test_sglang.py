"""reasoning-core under SGLang's names, against SGLang's own detectors (SGLang 0.5.23).

Differential: for every name of SGLang's ``ReasoningParser.DetectorMap`` we
serve, ``ReasoningParser("rc_<name>")`` and ``ReasoningParser("<name>")`` give
the same reasoning and content on generated well-formed completions, one-shot
(``parse_non_stream``) and streamed in random text chunks (``parse_stream_chunk``
then ``parse_stream_end``), for ``stream_reasoning`` on and off and
``force_reasoning`` None/True/False.  Plus vectors transcribed from SGLang's
unit tests (``test/registered/unit/parser/``).  Skips cleanly without SGLang.
"""
from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import pytest

from sglang_max_helpers import NO_START_CASES, completions, import_sglang_parsers, marker_pattern, text_chunks

reasoning_parser, rcs = import_sglang_parsers()
ReasoningParser = reasoning_parser.ReasoningParser
StreamingParseResult = reasoning_parser.StreamingParseResult
ORIGINAL = dict(ReasoningParser.DetectorMap)

from reasoning_core.families import get_family  # noqa: E402

SERVED = sorted(rcs.REASONING_DETECTORS)

# Content framing some formats always write around the answer.
FRAMES = {
    "cohere_command4": "<|START_TEXT|>%s<|END_TEXT|>",
    "gpt-oss": "<|start|>assistant<|channel|>final<|message|>%s<|return|>",
}

# Where SGLang's detector misplaces text on a well-formed output and ours
# differs on purpose (README, "SGLang" section): (name, mode, case) -> why.
KNOWN_DIFFERENCES = {
    ("cohere_command4", "stream", c): "SGLang's streaming leaves an echoed <|START_THINKING|> in the reasoning "
                                      "(its one-shot parse strips it; ours strips it in both)"
    for c in ("full", "truncated", "empty_reasoning", "no_content", "newline_content")
}


def _cases(name: str) -> dict[str, str]:
    sp = rcs.REASONING_DETECTORS[name].spec
    return completions(sp.start, sp.end, label=sp.label, frame=FRAMES.get(name, "%s"))


def _starts_inside(name: str, force) -> bool:
    sp = rcs.REASONING_DETECTORS[name].spec
    inside = sp.force if force is None else force
    return inside if sp.force_fixed is None else sp.force_fixed


def _pair(name: str, **kw):
    try:
        theirs = ReasoningParser(name, **kw)
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(type(exc)):
            ReasoningParser(f"rc_{name}", **kw)
        pytest.skip(f"SGLang's {name} does not build with {kw}: {exc}")
    return theirs, ReasoningParser(f"rc_{name}", **kw)


def _stream(parser, pieces) -> tuple[str, str]:
    r, c = [], []
    for piece in pieces:
        a, b = parser.parse_stream_chunk(piece)
        r.append(a or "")
        c.append(b or "")
    a, b = parser.parse_stream_end()
    return "".join(r) + (a or ""), "".join(c) + (b or "")


CASES = [(n, c) for n in SERVED for c in _cases(n)]
FORCE = [None, True, False]


@pytest.fixture(scope="module", autouse=True)
def _registered():
    """Our rc_ names in SGLang's maps for this module only."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser as _FCP

    saved = dict(ReasoningParser.DetectorMap), dict(_FCP.ToolCallParserEnum)
    rcs.register()
    yield
    for reg, before in zip((ReasoningParser.DetectorMap, _FCP.ToolCallParserEnum), saved):
        reg.clear()
        reg.update(before)


def test_every_detector_map_name_is_served_or_explained():
    names = {n for n in ORIGINAL if not n.startswith("rc_")}
    assert len(names) == 36
    assert names == set(rcs.REASONING_DETECTORS) | set(rcs.NOT_SERVED)
    assert not set(rcs.REASONING_DETECTORS) & set(rcs.NOT_SERVED)


def test_register_is_idempotent_and_replace_restores():
    rcs.register()
    rcs.register()
    for n, cls in rcs.REASONING_DETECTORS.items():
        assert ReasoningParser.DetectorMap[f"rc_{n}"] is cls
        assert ReasoningParser.DetectorMap[n] is ORIGINAL[n]
    from sglang.srt.function_call.function_call_parser import FunctionCallParser as _FCP

    tool_map = dict(_FCP.ToolCallParserEnum)
    try:
        rcs.register(replace=True)
        assert isinstance(ReasoningParser("qwen3").detector, rcs.REASONING_DETECTORS["qwen3"])
        assert _FCP.ToolCallParserEnum["hermes"] is rcs.TOOL_DETECTORS["hermes"]
    finally:
        ReasoningParser.DetectorMap.update(ORIGINAL)
        _FCP.ToolCallParserEnum.clear()
        _FCP.ToolCallParserEnum.update(tool_map)


def test_detectors_are_sglang_detectors():
    for n in SERVED:
        d = ReasoningParser(f"rc_{n}").detector
        assert isinstance(d, reasoning_parser.BaseReasoningFormatDetector)
        theirs = ReasoningParser(n).detector if n != "k2_horizon" else ReasoningParser(n, force_reasoning=True).detector
        # the attributes SGLang's serving layer reads
        for attr in ("think_start_token", "think_end_token", "reasoning_default", "thinks_internally",
                     "think_start_self_label", "tool_start_token"):
            assert getattr(d, attr) == getattr(theirs, attr), (n, attr)
        assert isinstance(d.parse_streaming_increment("x"), StreamingParseResult)


@pytest.mark.parametrize("name,case", CASES)
@pytest.mark.parametrize("force", FORCE, ids=["force_default", "force_on", "force_off"])
def test_one_shot_equals_sglang(name, case, force):
    if case in NO_START_CASES and not _starts_inside(name, force):
        pytest.skip("an end without a start is not well-formed when the output starts in content")
    text = _cases(name)[case]
    for sr in (True, False):
        theirs, ours = _pair(name, stream_reasoning=sr, force_reasoning=force)
        assert ours.parse_non_stream(text) == theirs.parse_non_stream(text)


@pytest.mark.parametrize("name,case", CASES)
@pytest.mark.parametrize("force", FORCE, ids=["force_default", "force_on", "force_off"])
@pytest.mark.parametrize("stream_reasoning", [True, False], ids=["stream_reasoning", "batched_reasoning"])
def test_streaming_equals_sglang(name, case, force, stream_reasoning):
    if case in NO_START_CASES and not _starts_inside(name, force):
        pytest.skip("an end without a start is not well-formed when the output starts in content")
    why = KNOWN_DIFFERENCES.get((name, "stream", case))
    if why:
        pytest.skip(f"documented difference: {why}")
    text = _cases(name)[case]
    sp = rcs.REASONING_DETECTORS[name].spec
    atomic = marker_pattern([sp.start, sp.end, sp.tool_start, *(FRAMES.get(name, "%s").split("%s"))])
    rng = random.Random(f"{name}/{case}/{force}/{stream_reasoning}")
    for _ in range(4):
        pieces = text_chunks(text, rng, atomic)
        theirs, ours = _pair(name, stream_reasoning=stream_reasoning, force_reasoning=force)
        assert _stream(ours, pieces) == _stream(theirs, pieces), pieces


@pytest.mark.parametrize("name", ["qwen3", "deepseek-r1", "glm45", "kimi_k2", "mistral", "minimax-m3", "gemma4"])
def test_plain_streaming_returns_each_chunk_at_once(name):
    """No hold-back beyond a possible marker prefix: text is emitted in the call that brings it."""
    sp = rcs.REASONING_DETECTORS[name].spec
    p = ReasoningParser(f"rc_{name}", force_reasoning=True)
    assert p.parse_stream_chunk("abc") == ("abc", "")
    assert p.parse_stream_chunk(" def" + sp.end + "xyz") == (" def", "xyz")
    assert p.parse_stream_chunk(" tail") == ("", " tail")


def test_gemma4_force_reasoning_starts_inside_the_thought_channel():
    p = ReasoningParser("rc_gemma4", force_reasoning=True)
    assert p.parse_non_stream("thinking<channel|>answer") == ("thinking", "answer")
    assert p.parse_non_stream("<|channel>thought\nthinking<channel|>answer") == ("thinking", "answer")
    p = ReasoningParser("rc_gemma4", force_reasoning=False)
    assert p.parse_non_stream("<|channel>thought\nthinking<channel|>answer") == ("thinking", "answer")
    assert p.parse_non_stream("answer") == ("", "answer")


def test_minimax_append_think_puts_the_start_back():
    p = ReasoningParser("rc_minimax-append-think")
    assert p.parse_stream_chunk("abc") == ("", "<think>abc")
    assert p.parse_stream_chunk("</think>x") == ("", "</think>x")
    assert ReasoningParser("rc_minimax-append-think").parse_non_stream("r</think>c") == ("", "<think>r</think>c")


def test_k2_horizon_effort_selects_its_pair():
    for effort, (s, e) in {"high": ("<ifm|think>", "</ifm|think>"),
                           "medium": ("<ifm|think_fast>", "</ifm|think_fast>"),
                           "low": ("<ifm|think_faster>", "</ifm|think_faster>")}.items():
        text = f"{s}r{e}c"
        d = rcs.REASONING_DETECTORS["k2_horizon"](force_reasoning=True, reasoning_effort=effort)
        t = reasoning_parser.ReasoningParser.DetectorMap["k2_horizon"](force_reasoning=True, reasoning_effort=effort)
        got = d.detect_and_parse(text)
        want = t.detect_and_parse(text)
        assert (got.reasoning_text, got.normal_text) == (want.reasoning_text, want.normal_text) == ("r", "c")
    with pytest.raises(ValueError):
        ReasoningParser("rc_k2_horizon", force_reasoning=False)


# Vectors transcribed (as facts) from SGLang's unit tests,
# test/registered/unit/parser/test_reasoning_parser.py.
VECTORS = [
    ("glm45", {}, "<think>Let me think about this step by step</think>The answer is 42.",
     ("Let me think about this step by step", "The answer is 42.")),
    ("glm45", {}, "<think>I need to think<tool_call>tool call data", ("I need to think", "<tool_call>tool call data")),
    ("glm45", {}, "<think>thinking<tool_call>first tool<tool_call>second tool<tool_call>final tool",
     ("thinking", "<tool_call>first tool<tool_call>second tool<tool_call>final tool")),
    ("glm45", {}, "<think>This is incomplete", ("This is incomplete", "")),
    ("glm45", {}, "Just the answer without any reasoning.", ("", "Just the answer without any reasoning.")),
    ("glm45", {"force_reasoning": True}, "This is reasoning", ("This is reasoning", "")),
    ("glm45", {"force_reasoning": True}, "More reasoning<tool_call>tool call",
     ("More reasoning", "<tool_call>tool call")),
    ("hunyuan", {}, "<think>Let me think about this</think>The answer is 42.",
     ("Let me think about this", "The answer is 42.")),
    ("hunyuan", {}, "Direct answer without thinking.", ("", "Direct answer without thinking.")),
    ("hunyuan", {}, "<think>thinking<tool_calls><tool_call>func<tool_sep></tool_call></tool_calls>",
     ("thinking", "<tool_calls><tool_call>func<tool_sep></tool_call></tool_calls>")),
    ("nemotron_3", {}, "<think>Let me think about this</think>The answer is 42.",
     ("Let me think about this", "The answer is 42.")),
    ("nemotron_3", {}, "<think>All reasoning, no answer</think>", ("All reasoning, no answer", "")),
    ("gemma4", {}, "<|channel>thought\nLet me think about this<channel|>The answer is 42.",
     ("Let me think about this", "The answer is 42.")),
]

STREAM_VECTORS = [
    ("glm45", {}, ["<think>", "thinking...", "</think>answer"], ("thinking...", "answer")),
    ("glm45", {}, ["<think>", "thinking", "<tool_call>", "tool args"], ("thinking", "<tool_call>tool args")),
    ("glm45", {}, ["<think>", "<tool_call>tool call"], ("", "<tool_call>tool call")),
    ("hunyuan", {}, ["<think>", "reasoning", "<tool_calls>", "<tool_call>func"],
     ("reasoning", "<tool_calls><tool_call>func")),
    ("kimi_k2", {}, ["<think>", "reasoning<|tool_calls_section_begin|>", "<|tool_call_begin|>"],
     ("reasoning", "<|tool_calls_section_begin|><|tool_call_begin|>")),
]


@pytest.mark.parametrize("name,kw,text,want", VECTORS)
def test_sglang_unit_test_vectors_one_shot(name, kw, text, want):
    assert ReasoningParser(f"rc_{name}", **kw).parse_non_stream(text) == want
    assert ReasoningParser(name, **kw).parse_non_stream(text) == want


@pytest.mark.parametrize("name,kw,pieces,want", STREAM_VECTORS)
def test_sglang_unit_test_vectors_streaming(name, kw, pieces, want):
    assert _stream(ReasoningParser(f"rc_{name}", **kw), pieces) == want
    assert _stream(ReasoningParser(name, **kw), pieces) == want


def test_nemotron_force_nonempty_content_vectors():
    d = rcs.REASONING_DETECTORS["nemotron_3"](force_nonempty_content=True)
    r = d.detect_and_parse("<think>All reasoning, no answer</think>")
    assert (r.reasoning_text, r.normal_text) == ("", "All reasoning, no answer")
    r = d.detect_and_parse("<think>Reasoning here</think>The answer is 42.")
    assert (r.reasoning_text, r.normal_text) == ("Reasoning here", "The answer is 42.")
    r = d.detect_and_parse("<think>Truncated reasoning without end token")
    assert (r.reasoning_text, r.normal_text) == ("", "Truncated reasoning without end token")


_NORMAL_IMPORT = textwrap.dedent('''
    import importlib.abc, importlib.machinery, sys, types
    # SGLang's runtime imports triton at package import; a CPU-only venv has
    # none.  An empty stand-in lets "import sglang" run its __init__ normally.
    class _Stub(types.ModuleType):
        def __getattr__(self, n):
            if n.startswith("__"):
                raise AttributeError(n)
            return _Stub(self.__name__ + "." + n)
        def __call__(self, *a, **k):
            return _Stub("stub")
    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name == "triton" or name.startswith("triton."):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
        def create_module(self, spec):
            m = _Stub(spec.name); m.__path__ = []; return m
        def exec_module(self, m):
            pass
    sys.meta_path.insert(0, _Finder())
    import warnings; warnings.simplefilter("ignore")
    import sglang
    assert hasattr(sglang, "__file__") and sglang.__file__.endswith("__init__.py")
    from reasoning_core.integrations import sglang as rcs
    rcs.register()
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    p = ReasoningParser("rc_qwen3", stream_reasoning=True, force_reasoning=True)
    assert p.parse_stream_chunk("abc</think>x") == ("abc", "x"), "stream"
    print("ok")
''')


def test_works_with_sglang_imported_normally():
    import os

    # MAX's import sets PYTHONEXECUTABLE (to the base interpreter) in os.environ;
    # a child started with it would not see this venv's site-packages.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONEXECUTABLE"}
    out = subprocess.run([sys.executable, "-c", _NORMAL_IMPORT], capture_output=True, text=True, timeout=300, env=env)
    if out.returncode != 0 and "import sglang" in out.stderr and "reasoning_core" not in out.stderr:
        pytest.skip(f"SGLang's package does not import here: {out.stderr.strip().splitlines()[-1]}")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


def test_family_map_is_the_source_of_truth():
    from reasoning_core.families import ENGINE_PARSER_NAMES

    for n in SERVED:
        fam = rcs.REASONING_DETECTORS[n]().family if n != "k2_horizon" else None
        if fam is not None and n not in ("hunyuan",):
            assert fam.name == get_family(ENGINE_PARSER_NAMES["sglang"][n]).name


# ---------------------------------------------------------------------------
# Function-call detectors
# ---------------------------------------------------------------------------

import json  # noqa: E402
import re  # noqa: E402

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402

ORIGINAL_TOOLS = {k: v for k, v in FunctionCallParser.ToolCallParserEnum.items() if not k.startswith("rc_")}


def _tool(name, props):
    return Tool(type="function", function=Function(name=name, description="d",
                                                   parameters={"type": "object", "properties": props}))


TOOLS = [_tool("get_time", {"tz": {"type": "string"}}),
         _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})]
_DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>")


def _call_text(fmt: str, name: str, args: dict) -> str:
    a = json.dumps(args)
    if fmt in ("hermes", "qwen25", "qwen"):
        return f'<tool_call>\n{{"name": "{name}", "arguments": {a}}}\n</tool_call>'
    if fmt == "qwen3_coder":
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    if fmt in ("llama3", "mistral"):
        return f'{{"name": "{name}", "{"parameters" if fmt == "llama3" else "arguments"}": {a}}}'
    if fmt == "deepseekv3":
        return f"{_DS[2]}function{_DS[4]}{name}\n```json\n{a}\n```{_DS[3]}"
    if fmt == "deepseekv31":
        return f"{_DS[2]}{name}{_DS[4]}{a}{_DS[3]}"
    if fmt == "kimi_k2":
        return f"<|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{a}<|tool_call_end|>"
    if fmt in ("glm45", "glm"):
        kv = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in args.items())
        return f"<tool_call>{name}\n{kv}</tool_call>"
    if fmt == "minimax-m2":
        params = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in args.items())
        return f'<invoke name="{name}">\n{params}</invoke>\n'
    raise KeyError(fmt)


def _section(fmt: str, calls: list[str]) -> str:
    if fmt in ("deepseekv3", "deepseekv31"):
        return _DS[0] + "".join(calls) + _DS[1]
    if fmt == "kimi_k2":
        return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"
    if fmt == "minimax-m2":
        return "<minimax:tool_call>\n" + "".join(calls) + "</minimax:tool_call>"
    if fmt == "mistral":
        return "[TOOL_CALLS] [" + ", ".join(calls) + "]"
    if fmt == "llama3":
        return "; ".join(calls)
    return "\n".join(calls)


def _tool_outputs(fmt: str) -> dict[str, str]:
    weather = _call_text(fmt, "get_weather", {"city": "Paris", "days": 3})
    time_ = _call_text(fmt, "get_time", {"tz": "UTC"})
    unknown = _call_text(fmt, "unknown_tool", {"x": "y"})
    pre = "" if fmt == "llama3" else "Let me check. "
    return {"one": pre + _section(fmt, [weather]), "two": pre + _section(fmt, [weather, time_]),
            "unknown": pre + _section(fmt, [unknown, time_]), "none": "Just text, no call."}


_TOOL_ATOMS = re.compile(r"<｜[^｜]*｜>|<\|[a-z_]+\|>|\[TOOL_CALLS\]|</?tool_call>|</?minimax:tool_call>|</?arg_key>|"
                         r"</?arg_value>")

# SGLang streaming leaks the text of a call to an unlisted tool (or of a second
# call) into the content; ours drops the call and keeps the content clean (README).
TOOL_DIFFERENCES = {
    **{(n, "unknown"): "SGLang streams fragments of the dropped call as content"
       for n in ("hermes", "qwen25", "qwen", "llama3", "minimax-m2", "mistral")},
    ("mistral", "two"): "SGLang streams the second call of a [TOOL_CALLS] list as content",
}


def _ws(normal: str) -> str:
    # SGLang trims whitespace around tool sections (one-shot) and keeps or
    # drops the newline between two sections depending on chunking; ours keeps it.
    return "".join(normal.split())


def _tool_stream(p, pieces):
    normal, calls = [], {}

    def take(n, cs):
        normal.append(n or "")
        for c in cs:
            d = calls.setdefault(c.tool_index, {"name": None, "args": ""})
            if c.name:
                d["name"] = c.name
            d["args"] += c.parameters or ""

    for piece in pieces:
        take(*p.parse_stream_chunk(piece))
    take(*p.parse_stream_end())
    return _ws("".join(normal)), [(k, calls[k]["name"], json.loads(calls[k]["args"] or "null")) for k in sorted(calls)]


# The first formats; the further format modules' names have differential files of their own.
TOOL_CASES = [(n, c) for n in sorted(set(rcs.TOOL_DETECTORS) - set(rcs._MORE_TOOL_NAMES))
              for c in ("one", "two", "unknown", "none")]


def test_tool_detectors_registered():
    rcs.register()
    for n, cls in rcs.TOOL_DETECTORS.items():
        assert n in ORIGINAL_TOOLS
        assert FunctionCallParser.ToolCallParserEnum[f"rc_{n}"] is cls
        assert FunctionCallParser.ToolCallParserEnum[n] is ORIGINAL_TOOLS[n]
        d = cls()
        native = ORIGINAL_TOOLS[n]()
        try:
            want = native.structure_info()("get_time")
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                d.structure_info()("get_time")
        else:
            assert d.structure_info()("get_time") == want
        assert d.supports_structural_tag() == native.supports_structural_tag()
        assert (d.bot_token, d.eot_token) == (native.bot_token, native.eot_token)


def test_tool_detector_runs_sglangs_own_helpers():
    # the methods SGLang's detector of a name has and ours lacks are ours too,
    # run by SGLang's detector; no __getattr__ hook sits on every attribute read
    import inspect

    rcs.register()
    for n, cls in rcs.TOOL_DETECTORS.items():
        assert not any("__getattr__" in vars(k) for k in cls.__mro__ if k.__module__.startswith("reasoning_core"))
        native_cls = ORIGINAL_TOOLS[n]
        for k in native_cls.__mro__[:native_cls.__mro__.index(rcs._BaseFormatDetector)]:
            for attr, v in vars(k).items():
                if inspect.isfunction(v) and not attr.startswith("__"):
                    assert callable(getattr(cls(), attr)), (n, attr)
    d, native = rcs.TOOL_DETECTORS["mistral"](), ORIGINAL_TOOLS["mistral"]()
    text = '[TOOL_CALLS] [{"name": "f", "arguments": {"a": [1, [2]]}}] tail'
    assert d._extract_json_array(text) == native._extract_json_array(text) is not None
    d, native = rcs.TOOL_DETECTORS["qwen3_coder"](), ORIGINAL_TOOLS["qwen3_coder"]()
    assert d._get_param_type({"type": "integer"}) == native._get_param_type({"type": "integer"})
    with pytest.raises(AttributeError):
        d.no_such_helper


def test_tool_detector_builds_sglangs_own_on_first_use():
    # a detector (one per request) copies its namesake's markers, read once per
    # class, and builds SGLang's own detector only when a hook needs it
    rcs.register()
    for n, cls in rcs.TOOL_DETECTORS.items():
        cls()
        d = cls()
        assert "_native_obj" not in d.__dict__
        native = ORIGINAL_TOOLS[n]()
        assert (d.bot_token, d.eot_token, d.tool_call_separator) == (
            native.bot_token, native.eot_token, native.tool_call_separator)
        assert d.supports_structural_tag() == native.supports_structural_tag()
        assert type(d.__dict__["_native_obj"]) is ORIGINAL_TOOLS[n]
        assert d._native is d.__dict__["_native_obj"]  # one per detector


@pytest.mark.parametrize("name,case", TOOL_CASES)
def test_tool_one_shot_equals_sglang(name, case):
    text = _tool_outputs(name)[case]
    theirs, ours = FunctionCallParser(TOOLS, name), FunctionCallParser(TOOLS, f"rc_{name}")
    assert ours.has_tool_call(text) == theirs.has_tool_call(text)
    a, b = theirs.parse_non_stream(text), ours.parse_non_stream(text)
    norm = lambda r: (_ws(r[0]), [(c.tool_index, c.name, json.loads(c.parameters)) for c in r[1]])  # noqa: E731
    assert norm(b) == norm(a)


@pytest.mark.parametrize("name,case", TOOL_CASES)
def test_tool_streaming_equals_sglang(name, case):
    why = TOOL_DIFFERENCES.get((name, case))
    if why:
        pytest.skip(f"documented difference: {why}")
    text = _tool_outputs(name)[case]
    rng = random.Random(f"{name}/{case}")
    for _ in range(4):
        pieces = text_chunks(text, rng, _TOOL_ATOMS, most=5)
        a = _tool_stream(FunctionCallParser(TOOLS, name), pieces)
        b = _tool_stream(FunctionCallParser(TOOLS, f"rc_{name}"), pieces)
        assert b == a, pieces


def test_tool_streaming_drops_unlisted_tools_cleanly():
    text = _tool_outputs("hermes")["unknown"]
    got = _tool_stream(FunctionCallParser(TOOLS, "rc_hermes"), text_chunks(text, random.Random(3), _TOOL_ATOMS))
    assert got == (_ws("Let me check. \n"), [(0, "get_time", {"tz": "UTC"})])


@pytest.mark.parametrize("pre", ["<think>", "Hi "])
def test_minimax_m2_block_cut_before_a_name(pre):
    # (found by the tool fuzz target) the stream ends in a last block before any call's name.
    # One-shot, the block stays text (as SGLang's detector keeps it). Streamed, whatever the
    # chunking: after an unclosed <think> it is reasoning text, never read for calls, so it
    # goes out as text; after content it is held, and dropped at the end (no call in it).
    text = pre + '<minimax:tool_call><invoke name="'
    ours, theirs = FunctionCallParser(TOOLS, "rc_minimax-m2"), FunctionCallParser(TOOLS, "minimax-m2")
    assert ours.parse_non_stream(text) == theirs.parse_non_stream(text) == (text, [])
    want = (_ws(text if pre == "<think>" else pre), [])
    for size in (1, 3, 13, len(text)):
        assert _tool_stream(FunctionCallParser(TOOLS, "rc_minimax-m2"),
                            [text[i:i + size] for i in range(0, len(text), size)]) == want


@pytest.mark.parametrize("name", ["qwen25", "qwen"])
def test_qwen25_one_shot_drops_whitespace_between_calls_as_streaming_does(name):
    # (found by the SGLang tool fuzz target) whitespace-only text between and after calls is
    # dropped streamed under these names; one-shot kept it when other text came after the calls
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    for text, want in ((f"Hi {call}\n{call} bye", "Hi  bye"), (f"{call}\n\n{call}tail\n", "tail"),
                       (f"Hi {call} x \n{call}\n", "Hi  x"), (f"Hi {call}\n{call}\n", "Hi")):
        normal, calls = FunctionCallParser(TOOLS, f"rc_{name}").parse_non_stream(text)
        assert (normal, len(calls)) == (want, 2), text
        streamed = FunctionCallParser(TOOLS, f"rc_{name}")
        got = [streamed.parse_stream_chunk(text)[0], streamed.parse_stream_end()[0]]
        assert "".join(got).strip() == want, text


@pytest.mark.parametrize("name", ["qwen25", "qwen"])
def test_qwen25_one_shot_keeps_whitespace_after_a_dropped_call_as_streaming_does(name):
    # (found by the SGLang tool fuzz target) a call to a tool the request does not list is not
    # sent, so the whitespace after it is not "after a call": streamed it stays, and one-shot
    # dropped it
    known = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    other = '<tool_call>\n{"name": "not_listed", "arguments": {"q": 1}}\n</tool_call>'
    for text, want in ((f"Hi {other} {known}tail", "Hi  tail"), (f"Hi {other}\n{other} x", "Hi \n x"),
                       (f"Hi {known}\n{other}\n{known} x", "Hi  x"), (f"{other} \n{known} x ", "x")):
        normal, calls = FunctionCallParser(TOOLS, f"rc_{name}").parse_non_stream(text)
        assert (normal.strip(), len(calls)) == (want.strip(), text.count("get_weather")), text
        for size in (1, 7, len(text)):
            streamed = FunctionCallParser(TOOLS, f"rc_{name}")
            got = [streamed.parse_stream_chunk(text[i:i + size])[0] for i in range(0, len(text), size)]
            assert "".join(got + [streamed.parse_stream_end()[0]]).strip() == want.strip(), (text, size)


@pytest.mark.parametrize("name", ["qwen25", "qwen"])
def test_qwen25_whitespace_rule_does_not_depend_on_the_chunks(name):
    # (found by the SGLang tool fuzz target) what is dropped after a call is a whitespace-only
    # run up to the next call or the end; whitespace after other text in the same run stays,
    # in whatever chunks it comes (it was dropped when it came in a chunk of its own)
    known = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    bad = '<tool_call>{"name": "f g", "arguments": {"city": 3}}</tool_call>'
    for text, want in ((f"Hi {known}x\n{known} bye", "Hi x\n bye"), (f"{known}x \n \n{known}", "x \n \n"),
                       (f"{known}\n \n{known}\n", ""), (f'{known}"{bad}\n{known}": y', '"\n": y'),
                       (f"{known}x\n\n", "x\n\n")):
        one = FunctionCallParser(TOOLS, f"rc_{name}").parse_non_stream(text)[0]
        seen = set()
        for size in list(range(1, 9)) + [len(text)]:
            streamed = FunctionCallParser(TOOLS, f"rc_{name}")
            got = [streamed.parse_stream_chunk(text[i:i + size])[0] for i in range(0, len(text), size)]
            seen.add("".join(got + [streamed.parse_stream_end()[0]]))
        assert len(seen) == 1, (text, seen)
        got = seen.pop()
        assert want in got and got.strip() == want.strip() and one.strip() == want.strip(), (text, got, one)


def test_token_level_hooks_answer_as_sglang():
    """The scheduler and grammar backend ask the detector for token ids and an answer frame."""
    from transformers import PreTrainedTokenizerFast
    from vocab import build_tokenizer

    tok = PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(
        ("<think>", "</think>", "<|channel>", "<channel|>", "<mm:think>", "</mm:think>", "<|content_thinking|>",
         "<|end_message|>")))
    for n in SERVED:
        kw = {"force_reasoning": True} if n == "k2_horizon" else {}
        ours, theirs = ReasoningParser(f"rc_{n}", **kw).detector, ReasoningParser(n, **kw).detector
        assert ours.get_think_end_token_ids(tok) == theirs.get_think_end_token_ids(tok), n
        assert ours.get_self_opened_think_start_token_ids(tok) == theirs.get_self_opened_think_start_token_ids(tok), n
        assert type(ours.get_answer_frame()) is type(theirs.get_answer_frame()), n


def test_hunyuan_reads_the_checkpoint_token_suffix():
    from transformers import PreTrainedTokenizerFast
    from vocab import build_tokenizer

    tok = PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(
        ("<think:ab12>", "</think:ab12>", "<tool_calls:ab12>", "</tool_calls:ab12>")))
    text = "<think:ab12>r<tool_calls:ab12>call"
    ours, theirs = ReasoningParser("rc_hunyuan", tokenizer=tok), ReasoningParser("hunyuan", tokenizer=tok)
    for attr in ("think_start_token", "think_end_token", "tool_start_token"):
        assert getattr(ours.detector, attr) == getattr(theirs.detector, attr)
    assert ours.parse_non_stream(text) == theirs.parse_non_stream(text) == ("r", "<tool_calls:ab12>call")


def test_every_sglang_tool_parser_name_is_served_or_explained():
    served, unserved = set(rcs.TOOL_DETECTORS), set(rcs.TOOL_NOT_SERVED)
    assert not served & unserved
    assert set(ORIGINAL_TOOLS) - served - unserved == set()
    assert (served | unserved) - set(ORIGINAL_TOOLS) == set()  # no stale names
    assert all(isinstance(why, str) and len(why) > 20 for why in rcs.TOOL_NOT_SERVED.values())
