"""What the built distributions carry (run by .ci/run on the output of ``python -m build``).

usage: python .ci/check_dists.py DIST_DIR

The wheel: the compiled module, the .pyx/.pyi/py.typed, the license; no
generated C, no build leftovers.  The sdist: the generated C (so a machine
without Cython builds it), the license, changelog and the whole test suite
with its helpers (so pytest runs from an unpacked sdist).
"""
from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

WHEEL_MUST = [
    "reasoning_core/__init__.py",
    "reasoning_core/__main__.py",
    "reasoning_core/_engine.pyx",
    "reasoning_core/_engine.pyi",
    "reasoning_core/py.typed",
    "reasoning_core/data/sample_completion.txt",
    "reasoning_core/_toolscan.pyx",
    "reasoning_core/_toolscan.pyi",
    "reasoning_core/integrations/max_architectures/__init__.py",
    "reasoning_core_py/_engine.py",
    "reasoning_core_py/_toolscan.py",
    "reasoning_core_py/py.typed",
]
SDIST_MUST = [
    "LICENSE",
    "CHANGELOG.md",
    "README.md",
    "MANIFEST.in",
    "setup.py",
    "pyproject.toml",
    "reasoning_core/_engine.c",
    "reasoning_core/_engine.pyx",
    "reasoning_core/_toolscan.c",
    "reasoning_core/_toolscan.pyx",
    "tests/conftest.py",
    "tests/vocab.py",
    "tests/streams.py",
    "tests/toolstreams.py",
    "tests/strategies.py",
    "tests/typing_user.py",
    "tests/fuzz/run.py",
    "tests/fuzz/targets.py",
    "tests/fuzz/test_fuzz.py",
]
NEVER = (".c", ".o", ".html", ".pyc")


def main(dist_dir: str) -> int:
    dist = Path(dist_dir)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    problems = []

    names = zipfile.ZipFile(wheel).namelist()
    problems += [f"wheel lacks {n}" for n in WHEEL_MUST if n not in names]
    for module in ("_engine", "_toolscan"):
        if not any(n.startswith(f"reasoning_core/{module}.") and n.endswith((".so", ".pyd")) for n in names):
            problems.append(f"wheel has no compiled {module}")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("wheel lacks the license")
    problems += [f"wheel carries {n}" for n in names if n.endswith(NEVER) or "__pycache__" in n]

    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    problems += [f"sdist lacks {n}" for n in SDIST_MUST if n not in members]
    in_tree = {str(p.relative_to(Path("tests")).as_posix()) for p in Path("tests").rglob("*.py")}
    problems += [f"sdist lacks tests/{n}" for n in sorted(in_tree) if f"tests/{n}" not in members]
    problems += [f"sdist carries {n}" for n in members
                 if n.endswith((".so", ".pyd", ".o", ".pyc")) or "__pycache__" in n]

    for p in problems:
        print(f"check_dists: {p}", file=sys.stderr)
    if not problems:
        print(f"check_dists: {wheel.name} ({len(names)} files) and {sdist.name} ({top}, {len(members)} entries) ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
