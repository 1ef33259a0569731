"""End of a stream under MAX 26.7: no text we hold back is lost.

MAX's chat route (``max/serve/router/openai_routes.py``) ends a streamed
response with one hook only: ``flush()``, on a parser that is a
``StructuralTagToolParser``, once the chunk's status is done; its token
pipeline has no end hook for reasoning parsers.  Our tool parsers hold a
trailing prefix of a marker (``It is 42 <t``) and some hold trailing blank
lines; here every MAX tool name we serve is driven the way that route drives
it (the ``isinstance`` check included) and must give back every character.
The grammar region MAX derives from the class must stay what it derives from
MAX's own class of that name.  Skips without MAX.
"""
from __future__ import annotations

import random

import pytest

from sglang_max_helpers import import_max

rcm = import_max()

from max.pipelines.lib import tool_parsing as max_tools  # noqa: E402
from max.pipelines.lib.pipeline_variants.utils import StructuredOutputHelper  # noqa: E402
from max.pipelines.lib.tool_parsing import StructuralTagToolParser  # noqa: E402

NAMES = sorted(rcm.TOOL_PARSERS)

ENDINGS = ["It is 42 <t", "It is 42\n\n", "It is 42 <", "It is 42 <|", "It is 42 <｜", "It is 42 [",
           "It is 42 {", "x <tool_call", "x <|tool", "x\n\n\n", "x <｜tool▁calls",
           "a < b", "<", "\n\n", "x <｜DSML｜"]


def _route_stream(parser, pieces: list[str]) -> str:
    """The content MAX's streaming route shows for these decoded pieces."""
    parser.reset()
    out: list[str] = []
    for piece in pieces:
        deltas = parser.parse_delta(piece)
        if deltas is None:
            out.append(piece)
        else:
            out.extend(d.content for d in deltas if d.content is not None)
    if isinstance(parser, StructuralTagToolParser):  # the route's own condition
        withheld = parser.flush()
        if withheld:
            out.append(withheld)
    return "".join(out)


def test_every_class_is_seen_by_the_routes_end_hook():
    for name in NAMES:
        assert isinstance(rcm.TOOL_PARSERS[name](), StructuralTagToolParser), name


@pytest.mark.parametrize("name", NAMES)
def test_text_held_at_the_end_is_released(name):
    rng = random.Random(name)
    parser = rcm.TOOL_PARSERS[name]()
    for text in ENDINGS:
        whole = _route_stream(parser, [text])
        assert whole == text, (name, text, whole)
        for _ in range(4):
            cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 4)))) if len(text) > 1 else []
            pieces = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
            got = _route_stream(parser, pieces)
            assert got == text, (name, pieces, got)


@pytest.mark.parametrize("name", NAMES)
def test_flush_after_a_call_releases_no_structure(name):
    # Past a completed marker nothing is content any more: flush() gives
    # MAX's answer (None) for a stream whose tool region began.
    parser = rcm.TOOL_PARSERS[name]()
    theirs = max_tools._TOOL_PARSERS[name]()
    marker = getattr(theirs, "SECTION_BEGIN", "") or getattr(theirs, "CALL_BEGIN", "")
    if not marker:
        pytest.skip(f"MAX's {name} declares no start marker")
    _route_stream(parser, ["Sure. ", marker])
    parser.reset()
    parser.parse_delta("Sure. " + marker)
    assert parser.flush() is None


@pytest.mark.parametrize("name", NAMES)
def test_grammar_region_is_maxs(name):
    tags = StructuredOutputHelper._get_tool_region_tags
    rcm.register()
    assert tags(f"rc_{name}") == tags(name)
