"""Packaging: the distribution name, the public names' types, ``python -m``, the build fallback.

These run against whichever ``reasoning_core`` is imported: a checkout, an
installed wheel (CI copies tests/ away from the source tree for that) or an
unpacked sdist.  Checks of source files skip where the file is not beside tests/.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import reasoning_core as rc

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DISTRIBUTION = "reasoning-spans"
LAZY = ("text_parser", "TextReasoningParser", "ReasoningStreamDecoder", "StreamDelta")


def _source(name: str) -> str:
    path = ROOT / name
    if not path.is_file():
        pytest.skip(f"{name} is not beside tests/ (tests copied next to an installed package)")
    return path.read_text(encoding="utf-8")


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads(_source("pyproject.toml"))


def _package_root() -> Path:
    """The directory holding the imported ``reasoning_core`` (site-packages or a checkout)."""
    return Path(rc.__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REASONING_CORE_")}
    env["PYTHONPATH"] = str(_package_root())  # the same package, from any working directory
    env.update(extra)
    return env


# -- the distribution name ----------------------------------------------------------------

def test_distribution_name_is_not_the_taken_one():
    # "reasoning-core" on PyPI is an unrelated project with the same import name.
    assert _pyproject()["project"]["name"] == DISTRIBUTION
    assert _pyproject()["project"]["scripts"] == {"reasoning-core": "reasoning_core.cli:main"}


def test_messages_name_the_distribution():
    """No message or doc tells users to install the other project."""
    files = sorted(Path(rc.__file__).parent.rglob("*.py"))
    files += [p for p in (ROOT / "README.md", ROOT / "benchmarks" / "README.md") if p.is_file()]
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "reasoning-core[" not in text, path
        assert not re.search(r"pip install +['\"]?reasoning-core\b", text), path


def test_installed_metadata_matches():
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{DISTRIBUTION} is not installed (running from a bare checkout)")
    assert dist.version == rc.__version__
    assert dist.metadata["License-Expression"] == "Apache-2.0"
    top = (dist.read_text("top_level.txt") or "").split()
    assert sorted(top) == ["reasoning_core", "reasoning_core_py"]


def test_one_version():
    project = _pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert _pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "reasoning_core.__version__"}
    assert f"## {rc.__version__}" in _source("CHANGELOG.md")


def test_license_matches_declaration():
    assert _pyproject()["project"]["license"] == "Apache-2.0"
    text = _source("LICENSE")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


# -- public names and their types ---------------------------------------------------------

def test_lazy_names_are_public():
    for name in LAZY:
        assert name in rc.__all__ and name in dir(rc)
    assert set(rc.__all__) <= set(dir(rc))
    for name in rc.__all__:
        assert getattr(rc, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        rc.no_such_name  # noqa: B018


def test_lazy_names_stay_lazy():
    code = ("import sys, reasoning_core as rc; dir(rc); "
            "print(sorted(m for m in ('reasoning_core.text', 'reasoning_core.decode') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert (r.returncode, r.stdout.strip()) == (0, "[]"), r.stderr


def test_public_functions_have_docstrings():
    for name in ("create", "get_parser", "get_parser_cls", "available_parsers", "parser_for_model",
                 "thinking_end_ids", "text_parser"):
        assert (getattr(rc, name).__doc__ or "").strip(), name


def test_typing_user_script_runs():
    import typing_user

    typing_user.main()


def test_typing_user_script_passes_mypy_strict(tmp_path):
    """A user's script sees real types for every public name, lazy ones included."""
    pytest.importorskip("mypy", reason="mypy is not installed (it is in the [test] extra)")
    # The package's own modules are not what this checks; the user script is,
    # strictly, and with no expression of type Any.
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nstrict = True\ndisallow_any_expr = True\n"
        "[mypy-reasoning_core.*,reasoning_core_py.*]\nignore_errors = True\n"
    )
    env = _env()
    del env["PYTHONPATH"]
    root = _package_root()
    installed = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    if root not in installed:  # a checkout (editable install): mypy cannot follow import hooks
        env["MYPYPATH"] = str(root)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(HERE / "typing_user.py")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr


# -- python -m reasoning_core --------------------------------------------------------------

def test_python_m_is_the_command(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "reasoning_core", *args], capture_output=True, text=True,
                              cwd=tmp_path, env=_env(), timeout=60)

    r = run("detect", "Qwen/Qwen3-8B")
    assert (r.returncode, r.stdout.strip()) == (0, "qwen3"), r.stderr
    r = run("--version")
    assert (r.returncode, r.stdout.strip()) == (0, f"reasoning-core {rc.__version__}"), r.stderr


# -- setup.py: a failed build falls back to the pure engine --------------------------------

@pytest.fixture
def build_tree(tmp_path):
    """setup.py and the files it reads, with a stand-in engine source (never compiled)."""
    pytest.importorskip("setuptools")
    pytest.importorskip("numpy")
    (tmp_path / "reasoning_core").mkdir()
    (tmp_path / "setup.py").write_text(_source("setup.py"))
    # The package's own copy: a wheel ships it too.
    (tmp_path / "reasoning_core" / "_flags.py").write_text((Path(rc.__file__).parent / "_flags.py").read_text())
    for mod in ("_engine", "_toolscan"):  # the engine and the tool-call scanner
        (tmp_path / "reasoning_core" / f"{mod}.pyx").write_text("x = 1\n")
        (tmp_path / "reasoning_core" / f"{mod}.c").write_text("#error not compiled in this test\n")
    return tmp_path


def _build(tree: Path, **env: str) -> subprocess.CompletedProcess:
    full = _env(CC="/bin/false", **env)
    del full["PYTHONPATH"]
    return subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], capture_output=True,
                          text=True, cwd=tree, env=full, timeout=300)


@pytest.mark.skipif(os.name == "nt" or not Path("/bin/false").exists(), reason="CC=/bin/false is a POSIX trick")
def test_failed_build_falls_back_with_one_line(build_tree):
    r = _build(build_tree)
    assert r.returncode == 0, r.stdout + r.stderr
    notice = [ln for ln in r.stderr.splitlines() if ln.startswith(f"{DISTRIBUTION}:")]
    assert len(notice) == 1, r.stderr
    assert "pure-Python engine" in notice[0] and "REASONING_CORE_REQUIRE_EXTENSIONS=1" in notice[0]
    assert not list(build_tree.rglob("_*.so")) and not list(build_tree.rglob("_*.pyd"))


@pytest.mark.skipif(os.name == "nt" or not Path("/bin/false").exists(), reason="CC=/bin/false is a POSIX trick")
def test_failed_build_is_an_error_when_required(build_tree):
    r = _build(build_tree, REASONING_CORE_REQUIRE_EXTENSIONS="1")
    assert r.returncode != 0
    assert "REASONING_CORE_REQUIRE_EXTENSIONS is set" in r.stderr


def test_setup_builds_from_generated_c_without_cython(build_tree):
    """Without Cython the extension's source is the generated C the sdist ships."""
    code = (
        "import sys, importlib.abc\n"
        "class NoCython(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'Cython' or name.startswith('Cython.'):\n"
        "            raise ImportError('no Cython here')\n"
        "sys.meta_path.insert(0, NoCython())\n"
        "import setuptools\n"
        "captured = {}\n"
        "setuptools.setup = lambda **kw: captured.update(kw)\n"
        "sys.argv = ['setup.py']\n"
        "exec(compile(open('setup.py').read(), 'setup.py', 'exec'), {'__file__': 'setup.py', '__name__': 'x'})\n"
        "print([s for e in captured['ext_modules'] for s in e.sources])\n"
    )
    full = _env()
    del full["PYTHONPATH"]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=build_tree, env=full,
                       timeout=120)
    assert (r.returncode, r.stdout.strip()) == (0, "['reasoning_core/_engine.c', 'reasoning_core/_toolscan.c']"), r.stderr


# -- what the build configuration promises ------------------------------------------------

def test_build_requirements_pinned():
    requires = _pyproject()["build-system"]["requires"]
    assert "Cython>=3.0,<4" in requires
    assert any(r.startswith("setuptools>=77") for r in requires)  # SPDX license string without warnings


def test_cibuildwheel_builds_and_tests_every_target():
    cfg = _pyproject()["tool"]["cibuildwheel"]
    assert cfg["build"].split() == ["cp310-*", "cp311-*", "cp312-*", "cp313-*"]
    assert cfg["environment"] == {"REASONING_CORE_REQUIRE_EXTENSIONS": "1"}
    assert set(cfg["linux"]["archs"]) == {"x86_64", "aarch64"}
    assert "musllinux" not in cfg.get("skip", "")
    # The tests read these beside tests/; the run must not see the source package.
    assert sorted(cfg["test-sources"]) == ["CHANGELOG.md", "LICENSE", "README.md", "pyproject.toml", "setup.py",
                                           "tests"]
    assert "pytest" in cfg["test-command"]


def test_sdist_manifest_ships_test_helpers_and_generated_c():
    manifest = _source("MANIFEST.in").splitlines()
    assert "recursive-include tests *.py" in manifest
    assert "include reasoning_core/_engine.c" in manifest
    assert "include reasoning_core/_toolscan.c" in manifest
    excluded = _pyproject()["tool"]["setuptools"]["exclude-package-data"]["reasoning_core"]
    assert "*.c" in excluded  # the wheel carries the compiled module, not its C
