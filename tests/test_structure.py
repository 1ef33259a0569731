"""The compiled engine and its twin expose the same names and constants.

The ``.pyx`` keeps its own copy of the state, kind and segment constants
(as C enum values, so the loops compile to plain integers); this test is the
"keep in step" rule, checked instead of commented.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import reasoning_core as rc
from reasoning_core import _tables
from reasoning_core._dispatch import backend_module, resolve_backend

PYX = Path(_tables.__file__).with_name("_engine.pyx")


def _public(cls) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.compiled
@pytest.mark.parametrize("name", ["Engine", "BatchEngine", "BatchStepResult"])
def test_both_backends_expose_the_same_public_names(name):
    c, py = backend_module("cython"), backend_module("python")
    assert _public(getattr(c, name)) == _public(getattr(py, name))
    assert c.__all__ == py.__all__


def test_pyx_constants_equal_the_shared_tables_module():
    enum = PYX.read_text().split("cdef enum:", 1)[1].split("\n\n", 1)[0]
    values = dict(re.findall(r"^\s+([A-Z_]+) = (\d+)", enum, re.M))
    assert values, "the .pyx constant block was not found"
    expected = {
        "CONTENT": _tables.CONTENT, "REASONING": _tables.REASONING, "SEEDED": _tables.SEEDED,
        "AWAITING": _tables.AWAITING,
        "K_START": _tables.START, "K_END": _tables.END, "K_TERM": _tables.TERM, "K_HEADER": _tables.HEADER,
        "K_ENABLE": _tables.ENABLE,
        "SEG_CONTENT": _tables.SEG_CONTENT, "SEG_REASONING": _tables.SEG_REASONING,
        "SEG_DELIMITER": _tables.SEG_DELIMITER, "SEG_HELD": _tables.SEG_HELD, "SEG_START": _tables.SEG_START,
        "MODE_PROMPT_REV": _tables.MODE_PROMPT_REV, "MODE_ENABLE": _tables.MODE_ENABLE,
    }
    assert {k: int(values[k]) for k in expected} == expected
    # The held bit sits above the two state bits.
    assert int(values["HELD_BIT"]) == _tables.HELD_BIT > max(_tables.CONTENT, _tables.REASONING, _tables.SEEDED,
                                                              _tables.AWAITING)


@pytest.mark.parametrize("backend", [None, "python"])
def test_dispatcher_names_the_backend(backend):
    name, mod = resolve_backend(backend)
    assert name == (rc.BACKEND if backend is None else backend)
    assert mod is backend_module(backend)
    assert rc.get_parser("passthrough", backend=backend).backend == name
    assert rc.text_parser("deepseek_r1", backend=backend).backend == name


def test_top_level_batch_result_type_covers_both_backends(deepseek_tokenizer, backend):
    batch = rc.ReasoningBatch("deepseek_r1", 2, tokenizer=deepseek_tokenizer, backend=backend)
    batch.open(0)
    assert isinstance(batch.step([0], [5]), rc.BatchStepResult)
    assert isinstance(batch.new_result(3), rc.BatchStepResult)


def test_text_and_token_tables_share_one_builder():
    from reasoning_core._tokenizer import CODE_POINTS, tables_for
    from reasoning_core.families import get_family
    from reasoning_core.text import text_tables

    for name in rc.available_parsers():
        fam = get_family(name)
        t = text_tables(name)
        assert t is tables_for(fam, CODE_POINTS)  # one cache
        assert t.default_state == (_tables.SEEDED if fam.starts_in_reasoning else _tables.CONTENT)
        assert t.awaiting_family == fam.awaiting_start


def test_each_tool_format_opens_on_its_family_terminators():
    from reasoning_core import tools
    from reasoning_core.families import FAMILIES

    paired = {f.name: f.tool_parser for f in FAMILIES.values() if f.tool_parser}
    assert paired, "no family names a tool format"
    for fam_name, fmt in paired.items():
        fam = FAMILIES[fam_name]
        parser = tools.for_family(fam_name)
        assert type(parser) is tools.get_parser_cls(fmt)
        # A terminator that ends reasoning is exactly what starts a tool section.
        assert set(fam.terminators) <= set(parser.openers) or not fam.terminators, fam_name
        # The family's own think block is never read as calls.
        assert (fam.start[0], fam.end[0]) in parser.think_pairs, fam_name
    assert tools.for_family("passthrough") is None
    with pytest.raises(ValueError):
        tools.for_family("no-such-family")


def test_end_to_end_pairings_come_from_the_family_table():
    from test_reasoning_tools_e2e import CASES

    from reasoning_core.families import get_family

    for case in CASES:
        assert get_family(case.family).tool_parser == case.tool, case


def test_stub_declares_exactly_the_twins_public_names():
    import ast

    from reasoning_core_py import _engine as twin

    tree = ast.parse(PYX.with_suffix(".pyi").read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            declared = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    declared.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    declared.add(item.target.id)
            public = {n for n in declared if not n.startswith("_")}
            assert public == _public(getattr(twin, node.name)), node.name
    assert {n.name for n in tree.body if isinstance(n, ast.ClassDef)} == set(twin.__all__)
