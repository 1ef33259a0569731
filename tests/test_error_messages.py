"""Errors that name a caller's value show it cut short.

A parser name, a backend, a tool name, a ``tool_choice``, a budget or a
command-line argument can come from a client: a 1 MB value must not become a
1 MB exception message (and so a 1 MB log line or error response).  Each
entry point below is given such a value and must raise its usual error,
naming what was wrong, in a message of a few hundred characters at most.
"""
from __future__ import annotations

import pytest

import reasoning_core as rc
from reasoning_core import tools
from reasoning_core._shared import brief
from reasoning_core.budget import ReasoningBudget
from reasoning_core.families import family_for_tokenizer, get_family, make_family, response_template_family
from reasoning_core.structural_tag import structural_tag
from vocab import deepseek_tokenizer

HUGE = "x" * 1_000_000
LIMIT = 2_500  # characters: a message names the value cut short, and may list the valid names

_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def _raises(exc_type, fn, *args, **kwargs) -> str:
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert len(msg) < LIMIT, msg[:300]
    return msg


@pytest.mark.parametrize("value, shows", [
    (HUGE, "(1,000,000 characters)"),
    ("short", "'short'"),
    (2 ** 100_000, "an int of 100,001 bits"),
    (-(2 ** 100_000), "an int of 100,001 bits"),
    ({"k" * 500: list(range(10_000))}, "..."),
    (None, "None"),
], ids=["long-str", "short-str", "huge-int", "huge-negative-int", "big-dict", "none"])
def test_brief_is_short_whatever_the_value(value, shows):
    text = brief(value)
    assert len(text) <= 160
    assert shows in text


def test_brief_of_a_repr_that_raises():
    class Bad:
        def __repr__(self):
            raise RuntimeError("no repr")

    assert "Bad" in brief(Bad())


def test_family_names():
    assert "(1,000,000 characters)" in _raises(ValueError, get_family, HUGE)
    _raises(ValueError, family_for_tokenizer, HUGE, None, engine="vllm")
    _raises(ValueError, family_for_tokenizer, "qwen3", None, engine=HUGE)


def test_a_marker_in_two_roles():
    marker = "<" + "m" * 100_000 + ">"
    msg = _raises(ValueError, make_family, "mine", start=marker, end=marker)
    assert "already a start marker" in msg


def test_response_template_fields():
    _raises(ValueError, response_template_family, {"version": HUGE, "fields": {}})
    _raises(ValueError, response_template_family, {"version": 1, "fields": {HUGE: 1}})


def test_backends():
    _raises(ValueError, rc.get_parser, "deepseek_r1", deepseek_tokenizer(), backend=HUGE)
    from reasoning_core.tools._json import scanner

    _raises(ValueError, scanner, HUGE)


def test_starts_in_reasoning():
    parser = rc.get_parser("deepseek_r1", deepseek_tokenizer())
    _raises(ValueError, parser.begin, starts_in_reasoning=HUGE)


def test_decoder_field():
    tok = deepseek_tokenizer()
    _raises(ValueError, rc.ReasoningStreamDecoder, rc.get_parser("deepseek_r1", tok), tok, field=HUGE)


def test_tool_parser_names_and_schemas():
    _raises(ValueError, tools.create, HUGE)
    _raises(TypeError, tools.create("hermes").set_streaming_tool_schemas, {HUGE: 3})


def test_structural_tag_tools_and_tool_choice():
    bad_name = {"type": "function", "function": {"name": HUGE}}
    _raises(ValueError, structural_tag, "qwen3", [bad_name])
    _raises(ValueError, structural_tag, "qwen3", [_TOOL], tool_choice=HUGE)
    _raises(ValueError, structural_tag, "qwen3", [_TOOL], tool_choice={"function": {"names": [HUGE] * 100}})
    many = [{"type": "function", "function": {"name": f"tool_{i}"}} for i in range(5_000)]
    msg = _raises(ValueError, structural_tag, "qwen3", many, tool_choice="get_weather", builtin=False)
    assert "tool_0" in msg and "5,000 in all" in msg


@pytest.mark.parametrize("budget", [2 ** 100_000, -(2 ** 100_000), 2 ** 40], ids=["huge", "huge-negative", "2**40"])
def test_budgets(budget):
    msg = _raises(ValueError, ReasoningBudget, "deepseek_r1", budget=budget, tokenizer=deepseek_tokenizer())
    assert "budget must" in msg


def test_cli_arguments(capsys):
    from reasoning_core import cli

    for argv in (["split", "--parser", HUGE, "text"], ["detect", HUGE], ["bench", "--repeat", HUGE],
                 ["bench", "--only", HUGE], ["bench", "--only", ",".join(["w"] * 100_000)],
                 ["stream", "--chunk", HUGE, "text"]):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        assert code != 0 or argv[0] == "detect", argv[0]  # (an unknown model is passed through)
        assert len(out.out) + len(out.err) < 4 * LIMIT, (argv[0], out.err[:300])
