"""Typing and documentation for users: docstrings on the public API, an editable
install that mypy can follow (tests/typing_user.py checks the types themselves)."""
from __future__ import annotations

import importlib
import inspect
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

import reasoning_core as rc
from reasoning_core import types as rtypes

ROOT = Path(__file__).resolve().parent.parent

# Every module a user imports names from, with its __all__.
PUBLIC_MODULES = ["reasoning_core", "reasoning_core.tools", "reasoning_core.structural_tag", "reasoning_core.families",
                  "reasoning_core.batch", "reasoning_core.decode", "reasoning_core.text", "reasoning_core.parser",
                  "reasoning_core.types", "reasoning_core.errors"]


def _public_callables():
    """``(label, object)`` for every public function and class, and every public
    method and property of those classes that the package defines."""
    seen: set[tuple[str, str]] = set()
    for mname in PUBLIC_MODULES:
        mod = importlib.import_module(mname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not (inspect.isclass(obj) or callable(obj)) or getattr(obj, "__module__", None) == "typing":
                continue  # data, and type aliases (structural_tag.JSONValue)
            yield f"{mname}.{name}", obj
            if not inspect.isclass(obj):
                continue
            for attr in dir(obj):
                if attr.startswith("_"):
                    continue
                owner = next((k for k in obj.__mro__ if attr in vars(k)), None)
                if owner is None or not owner.__module__.startswith(("reasoning_core", "reasoning_core_py")):
                    continue
                raw = inspect.getattr_static(obj, attr)
                if isinstance(raw, (staticmethod, classmethod)):
                    raw = raw.__func__
                # Methods and properties (the compiled classes' getset descriptors are
                # properties); plain data attributes (slots, dataclass fields) are not callables.
                if inspect.isfunction(raw) or isinstance(raw, property) or callable(raw) or \
                        type(raw).__name__ == "getset_descriptor":
                    key = (owner.__qualname__, attr)
                    if key not in seen:
                        seen.add(key)
                        yield f"{mname}.{name}.{attr}", raw


def _doc(obj) -> str:
    # inspect.getdoc follows a method's docstring up the class hierarchy.
    return (inspect.getdoc(obj) or "").strip()


def test_the_walk_reaches_the_methods_named_in_the_issue():
    labels = {label for label, _ in _public_callables()}
    for name in ("ReasoningBatch.step", "ReasoningBatch.step_ragged", "ReasoningBatch.close", "ReasoningBatch.is_open",
                 "FamilyParser.will_reason_after_prompt", "FamilyParser.reset", "TokenSplit.content_ids",
                 "tools.BaseToolParser.reset", "tools.for_family"):
        assert any(label.endswith(name) for label in labels), name


def test_every_public_callable_has_a_docstring():
    missing = [label for label, obj in _public_callables() if not _doc(obj)]
    assert missing == []


def _without_signature(doc: str) -> str:
    # Cython embeds "Name.method(self, ...)" as a docstring's first line.
    first, _, rest = doc.partition("\n\n")
    return rest if "(" in first and first.split("(")[0].rsplit(".", 1)[-1].isidentifier() and rest else doc


@pytest.mark.compiled
def test_compiled_result_types_document_what_the_pure_ones_do():
    if rc.BACKEND != "cython":
        pytest.skip("the compiled engine is not built")
    for compiled, pure in ((rc.ReasoningSpan, rtypes.PyReasoningSpan), (rc.TokenSplit, rtypes.PyTokenSplit)):
        assert compiled is not pure
        for attr in dir(pure):
            raw = inspect.getattr_static(pure, attr)
            if attr.startswith("_") or not (inspect.isfunction(raw) or isinstance(raw, property)):
                continue
            assert _without_signature(_doc(getattr(compiled, attr))) == _doc(raw), (compiled.__name__, attr)


def test_batch_step_methods_are_typed_and_documented():
    for name in ("step", "step_ragged"):
        sig = inspect.signature(getattr(rc.ReasoningBatch, name))
        assert sig.return_annotation == "BatchStepResult"
        assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values() if p.name != "self")


def test_structural_tag_is_not_typed_any():
    from reasoning_core import structural_tag as st

    hints = [inspect.signature(f).return_annotation for f in st.structural_tag.__wrapped__] \
        if hasattr(st.structural_tag, "__wrapped__") else None
    assert hints is None  # a plain function with overloads, not a wrapper
    import typing

    overloads = typing.get_overloads(st.structural_tag)
    returns = {inspect.signature(f).return_annotation for f in overloads}
    assert "dict[str, JSONValue]" in returns


# -- editable install ------------------------------------------------------------------------

def _have(*dists: str) -> bool:
    # Installed distributions, read from their metadata: importlib.util.find_spec("pip")
    # would switch setuptools' distutils shim off for the rest of the process.
    from importlib import metadata

    try:
        for d in dists:
            metadata.distribution(d)
    except metadata.PackageNotFoundError:
        return False
    return True


def _setuptools_builds_the_project() -> bool:
    """setuptools >= 77 (pyproject's build requirement: the SPDX license string)."""
    from importlib import metadata

    try:
        major = int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77


@pytest.mark.skipif(not _have("pip", "setuptools", "mypy"), reason="needs pip, setuptools and mypy here")
@pytest.mark.skipif(not _setuptools_builds_the_project(), reason="needs setuptools >= 77 here (the build requirement)")
@pytest.mark.skipif(not (ROOT / "reasoning_core" / "_engine.pyx").is_file() or not (ROOT / "setup.py").is_file(),
                    reason="needs the project's source tree (the tests run from a copy here)")
def test_editable_install_is_found_by_mypy(tmp_path):
    """`pip install -e .` (the README's install for contributors) must leave a
    package mypy can find: a .pth path entry, not only an import hook."""
    project = tmp_path / "project"
    # The project's files (no build outputs): what a clone has.
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(
        ".git", "build", "*.so", "*.pyd", "*.c", "*.html", "__pycache__", ".mypy_cache", "*.egg-info"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    target_site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                      capture_output=True, text=True, check=True).stdout.strip())
    # This interpreter's packages (setuptools, mypy, numpy) for the build and the check, offline.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    (target_site / "outer.pth").write_text("\n".join(sorted(ours)) + "\n")
    env = {**os.environ, "REASONING_CORE_NO_EXTENSIONS": "1", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                        "--no-build-isolation", "-e", str(project)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    user = tmp_path / "user"
    user.mkdir()
    (user / "check.py").write_text(textwrap.dedent("""
        import reasoning_core as rc

        batch: rc.ReasoningBatch = rc.ReasoningBatch("qwen3", 2)
        wrong: int = rc.parser_for_model("Qwen/Qwen3-8B")
    """))
    r = subprocess.run([str(py), "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                        "check.py"], capture_output=True, text=True, cwd=user, env=env, timeout=300)
    out = r.stdout + r.stderr
    # The package is found and read: the one error is the script's own wrong annotation.
    assert "import-not-found" not in out and "Cannot find implementation" not in out, out
    assert 'check.py:5: error: Incompatible types in assignment (expression has type "str", variable has type "int")' \
        in out, out
    assert out.count("error:") == 1, out
