"""A user's script touching every public name, for ``mypy --strict`` (tests/test_packaging.py).

Each result is assigned to an annotated variable, so a name that type checkers
saw as ``Any`` (the lazily loaded ones, before the package declared them)
or with a wrong type fails the check.  It also runs (``python
tests/typing_user.py``): the types it claims are the ones the code returns.
"""
from __future__ import annotations

import asyncio
import warnings
from typing import Callable, Optional

import numpy as np

import reasoning_core as rc
from reasoning_core import tools
from reasoning_core import (
    BACKEND,
    FAMILIES,
    BatchStepResult,
    Family,
    FamilyParser,
    LabelStripper,
    ParsedReasoningDelta,
    ReasoningBatch,
    ReasoningCoreWarning,
    ReasoningEndIds,
    ReasoningParser,
    ReasoningSpan,
    ReasoningStreamDecoder,
    StreamDelta,
    TextReasoningParser,
    TokenSplit,
    available_parsers,
    create,
    get_parser,
    get_parser_cls,
    parser_for_model,
    text_parser,
    thinking_end_ids,
)
from reasoning_core.structural_tag import JSONValue, structural_tag


class CharTokenizer:
    """Id n decodes to chr(97 + n % 26): enough for a decoder without delimiters."""

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(97 + i % 26) for i in ids)


def token_level() -> None:
    backend: str = BACKEND
    version: str = rc.__version__
    names: list[str] = available_parsers()
    family: Family = FAMILIES["deepseek_r1"]
    aliases: tuple[str, ...] = family.names
    chosen: str = parser_for_model("Qwen/Qwen3-8B")
    cls: type[FamilyParser] = get_parser_cls("qwen3")
    parser: FamilyParser = get_parser("passthrough")
    base: ReasoningParser = parser
    delta: ParsedReasoningDelta = base.stream([5, 6], False)
    span: ReasoningSpan = delta.span
    still: bool = delta.is_still_reasoning
    formatter: Optional[Callable[[str], Optional[str]]] = delta.reasoning_text_formatter
    split: TokenSplit = parser.begin().split([1, 2, 3])
    content: list[int] = split.content_ids
    segments: list[tuple[str, int, int]] = split.segments
    made: FamilyParser = asyncio.run(create("passthrough"))
    ends: ReasoningEndIds = thinking_end_ids(made)
    single: int | None = ends.single_token
    stripper = LabelStripper("thought\n")
    piece: Optional[str] = stripper("thought\nhi")
    assert backend in ("cython", "python") and version and names and aliases and chosen == "qwen3"
    assert cls.family.name == "qwen3" and not span.is_empty or not still
    assert formatter is None and content == [1, 2, 3] and segments and single is None and piece == "hi"


def batch_level() -> None:
    batch = ReasoningBatch("passthrough", 4)
    capacity: int = batch.capacity
    opened: bool = batch.open(0)
    result: BatchStepResult = batch.new_result(1)
    stepped: BatchStepResult = batch.step([0], [7], out=result)
    reasoning: np.ndarray[tuple[int], np.dtype[np.bool_]] = stepped.is_reasoning
    released: np.ndarray[tuple[int], np.dtype[np.uint8]] = stepped.released
    size: int = stepped.size
    batch.open(1)
    ragged: BatchStepResult = batch.step_ragged([0, 1], [0, 2, 3], [4, 5, 6])
    is_open: bool = batch.is_open(1)
    where: str = batch.state(1)
    ends: ReasoningEndIds = batch.end_ids()
    finished: tuple[tuple[int, ...], bool] = batch.finish(0)
    batch.close(1)
    assert capacity == 4 and opened is False and isinstance(result, BatchStepResult)
    assert "is_reasoning=[0]" in repr(stepped) and reasoning is stepped.is_reasoning and released is stepped.released
    assert size == 1 and ragged.size == 3 and is_open and where == "content"
    assert ends.end == () and finished == ((), False) and not batch.is_open(1)


def structural_level() -> None:
    tag: dict[str, JSONValue] = structural_tag("qwen3", [{"type": "function", "function": {"name": "f"}}],
                                               builtin=False)
    fmt: Optional[str] = tools.format_for_family("qwen3")
    parser: Optional[tools.BaseToolParser] = tools.for_family("qwen3")
    assert tag["type"] == "structural_tag" and fmt == "hermes" and parser is not None


def text_level() -> None:
    parser: TextReasoningParser = text_parser("deepseek_r1")
    reasoning, content = parser.parse("<think>why</think>because")
    pair: tuple[str, str] = (reasoning, content)
    same: TextReasoningParser = TextReasoningParser("qwen3")
    fed: tuple[str, str] = same.feed("no reasoning here")
    rest: tuple[str, str] = same.finish()
    decoder: ReasoningStreamDecoder = ReasoningStreamDecoder(get_parser("passthrough").begin(), CharTokenizer())
    step: StreamDelta = decoder.push([0, 1, 2])
    text: str = step.content
    wire: dict[str, str] = step.to_openai_delta()
    last: StreamDelta = decoder.finish()
    warning: type[Warning] = ReasoningCoreWarning
    assert pair == ("why", "because") and fed[0] == "" and rest[0] == ""
    assert text == "abc" and wire == {"content": "abc"} and not last and issubclass(warning, UserWarning)


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        token_level()
        batch_level()
        structural_level()
        text_level()
    print("ok")


if __name__ == "__main__":
    main()
