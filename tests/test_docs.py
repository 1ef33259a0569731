"""The README as a front page, and its links into the documentation site.

The site itself is built by ``mkdocs build --strict`` and its code blocks run
under pytest-markdown-docs (the docs stage of ``.ci/run``); these checks need
neither, so they run with the rest of the suite.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

# CI (.ci/run) and users run these two lines exactly as written.
MAIN_JOB = 'python -m pip install ".[cli]" && reasoning-core split'
TEST_COMMAND = 'python -m pip install -e ".[test]" && python -m pytest -q'


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _links(text: str) -> list[str]:
    return re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", text)


def test_readme_keeps_the_two_commands_in_their_own_blocks():
    blocks = re.findall(r"```bash\n(.*?)```", _readme(), re.S)
    assert f"{MAIN_JOB}\n" in blocks
    assert f"{TEST_COMMAND}\n" in blocks


def test_readme_is_a_front_page():
    assert len(_readme().splitlines()) <= 200


def test_engine_and_server_loop_pages_are_one_click_from_the_readme():
    targets = {t.split("#")[0] for t in _links(_readme())}
    for page in ("docs/engines/vllm.md", "docs/engines/sglang.md", "docs/engines/max.md",
                 "docs/how-to/server-loop.md"):
        assert page in targets, page


def test_readme_links_resolve():
    if not DOCS.is_dir():
        pytest.skip("docs/ is not next to these tests (a copy of tests/ for an installed-wheel or sdist run)")
    for target in _links(_readme()):
        if target.startswith(("http://", "https://", "#")):
            continue
        path, _, anchor = target.partition("#")
        assert (ROOT / path).exists(), target
        if anchor and path.endswith(".md"):
            heads = re.findall(r"^#+ (.*)$", (ROOT / path).read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in heads}
            assert anchor in slugs, target
