"""One source per fact in the code: no import circle, every tool marker from the family table.

The import graph counts every ``import`` a module makes, inside functions too:
a lazy import is how a circle hides, not how it goes away.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reasoning_core.families import FAMILIES

import reasoning_core

# The imported package's files (a checkout, or site-packages for an installed wheel: the .pyx ships in both).
ROOT = Path(reasoning_core.__file__).resolve().parent.parent
PACKAGES = ("reasoning_core", "reasoning_core_py")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")) + sorted((ROOT / pkg).rglob("*.pyx")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _tree(path: Path) -> ast.Module:
    src = path.read_text(encoding="utf-8")
    if path.suffix == ".pyx":
        # Cython: keep the Python imports (one per line in the engine), drop the cimports.
        lines = [ln.strip() for ln in src.splitlines()
                 if re.match(r"\s*(from \S+ import |import )", ln) and " cimport " not in ln
                 and not ln.rstrip().endswith("(")]
        src = "\n".join(lines)
    return ast.parse(src)


def _imports(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports (anywhere in it), parent packages aside."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_pkg else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join(here + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_the_modules_and_their_lazy_imports():
    # The check below is only as good as the graph: it must see a lazy import
    # inside a function (structural_tag reads the tool registry that way) and
    # the compiled engine's Python imports.
    assert "reasoning_core._engine" in MODULES and "reasoning_core_py._engine" in MODULES
    assert "reasoning_core.tools" in _imports("reasoning_core.structural_tag", MODULES["reasoning_core.structural_tag"])
    assert "reasoning_core._shared" in _imports("reasoning_core._engine", MODULES["reasoning_core._engine"])
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert _cycles(graph) == []


def test_leaf_modules_import_nothing_that_imports_them_back():
    # The two modules that exist to break the circles stay leaves of the tool and engine code.
    shared = _imports("reasoning_core._shared", MODULES["reasoning_core._shared"])
    assert shared == set()
    tag_calls = _imports("reasoning_core._tag_calls", MODULES["reasoning_core._tag_calls"])
    assert tag_calls <= {"reasoning_core.families"}


def test_every_module_imports_first():
    """Each module imported first in a fresh interpreter (both backends): no
    import order in which a circle bites."""
    names = sorted(n for n in MODULES if not n.startswith("reasoning_core.integrations."))
    script = textwrap.dedent("""
        import importlib, subprocess, sys
        for name in sys.argv[1:]:
            for k in [k for k in sys.modules if k.split(".")[0] in ("reasoning_core", "reasoning_core_py")]:
                del sys.modules[k]
            importlib.import_module(name)
        print("ok", len(sys.argv) - 1)
    """)
    for no_ext in ("0", "1"):
        env = {**os.environ, "REASONING_CORE_NO_EXTENSIONS": no_ext, "PYTHONPATH": str(ROOT)}
        if no_ext == "1":  # the pure engine on purpose: a run that requires the compiled one must not refuse it
            env.pop("REASONING_CORE_REQUIRE_EXTENSIONS", None)
        res = subprocess.run([sys.executable, "-c", script, *names], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.strip() == f"ok {len(names)}"


# -- tool markers ------------------------------------------------------------------------------

def _table_markers() -> set[str]:
    """Every tool-call opener of the family table (single and multi-token)."""
    out: set[str] = set()
    for fam in FAMILIES.values():
        out.update(fam.terminators)
        out.update(fam.header_terminators)
    return out


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module's code (docstrings aside), f-string pieces included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


TOOL_FORMAT_FILES = sorted((ROOT / "reasoning_core" / "tools").glob("_*_formats.py")) + [
    ROOT / "reasoning_core" / "_tag_calls.py", ROOT / "reasoning_core" / "structural_tag.py"]

# Literals that spell a table marker's text but are not that marker.
NOT_THE_MARKER = {
    # MiniMax M3's call tag is "]<]minimax[>[" + "<tool_call>": one marker the table does not have.
    ("_markup_formats.py", "<tool_call>"),
}


def test_marker_scan_finds_a_hard_coded_marker(tmp_path):
    sample = tmp_path / "_sample_formats.py"
    sample.write_text('"""<tool_call> in a docstring is prose."""\nOPEN = "<tool_call>"\nX = f"<tool_call>{1}"\n')
    assert [s for _, s in _code_strings(sample) if "<tool_call>" in s] == ["<tool_call>", "<tool_call>"]


@pytest.mark.parametrize("path", TOOL_FORMAT_FILES, ids=lambda p: p.name)
def test_no_tool_format_hard_codes_a_table_marker(path):
    markers = _table_markers()
    assert {"<tool_call>", "<tool_calls>", "<minimax:tool_call>", "<ifm|tool_calls>"} <= markers
    found = [(line, m, s) for line, s in _code_strings(path) for m in markers
             if m in s and (path.name, s) not in NOT_THE_MARKER]
    assert found == [], f"{path.name}: read these from the family table (families.tool_opener)"


def test_tool_opener_reads_the_table():
    from reasoning_core.families import get_family, tool_opener

    assert tool_opener("qwen3") == get_family("qwen3").terminators[0] == "<tool_call>"
    assert tool_opener("kimi_k3") == get_family("kimi_k3").header_terminators[0]
    with pytest.raises(ValueError, match="tool-call openers"):
        tool_opener("deepseek_r1")  # none
    with pytest.raises(ValueError, match="tool-call openers"):
        tool_opener("kimi_k2")  # two spellings: a format must say which


def test_the_formats_open_on_the_table_markers():
    # What reading them from the table means in the parsers: the openers are the table's.
    from reasoning_core import tools
    from reasoning_core.families import tool_opener

    cases = {"hunyuan": "hy_v3", "hunyuan_a13b": "hy_v3", "minimax_m2": "minimax_m2", "k2_horizon": "k2_horizon",
             "gemma4": "gemma4", "inkling": "inkling", "cohere_command": "cohere_command", "plamo3": "plamo3",
             "kimi_k3": "kimi_k3", "apertus": "apertus", "mimo": "mimo", "granite": "qwen3", "xlam": "qwen3"}
    for fmt, family in cases.items():
        assert tool_opener(family) in tools.get_parser_cls(fmt).openers, fmt
