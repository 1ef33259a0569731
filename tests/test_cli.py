"""The reasoning-core command, run as a subprocess like a user would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasoning_core import _bench

ANSI = "\x1b["


def _env(**extra: str) -> dict[str, str]:
    # REASONING_CORE_NO_EXTENSIONS passes through: the pure run checks the CLI on the pure engine.
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(extra)
    return env


def run(*args: str, stdin: str | None = None, env: dict | None = None, timeout: float = 60):
    return subprocess.run([sys.executable, "-m", "reasoning_core.cli", *args], input=stdin, capture_output=True,
                          text=True, encoding="utf-8", env=env or _env(), timeout=timeout)


# -- split -------------------------------------------------------------------------------------

def test_split_text_markers_glued_to_text(tmp_path):
    # In the DeepSeek vocabulary harmony's markers are text: ".<" carries the
    # reasoning's last character and the end marker's first.
    f = tmp_path / "harmony.txt"
    f.write_text("<|channel|>analysis<|message|>Think hard.<|end|><|start|>assistant<|channel|>final"
                 "<|message|>Answer.<|return|>")
    r = run("split", "--json", "--parser", "gpt_oss", str(f))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["reasoning"], out["content"]) == ("Think hard.", "Answer.")
    assert out["tokens"]["boundary"] == 2

def test_split_sample_json():
    r = run("split", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"reasoning", "content", "tokens", "parser", "backend"}
    assert set(out["tokens"]) == {"reasoning", "content", "delimiters", "boundary"}
    assert out["tokens"]["boundary"] == 0  # single-token markers: no token carries text beside one
    assert out["parser"] == "deepseek_r1" and out["backend"] in ("cython", "python")
    assert "inclusion–exclusion" in out["reasoning"] and "## Answer" in out["content"]
    assert out["tokens"]["delimiters"] == 2  # the sample's <think> and </think>
    # Delimiters are neither reasoning nor content, so never in the decoded texts.
    assert "<think>" not in out["reasoning"] + out["content"]
    assert "</think>" not in out["reasoning"] + out["content"]
    # Conservation: every token is counted once.
    sample_ids = _bench.Context().ids
    assert sum(out["tokens"].values()) == len(sample_ids)


def test_split_text_is_plain_when_piped():
    r = run("split")
    assert r.returncode == 0, r.stderr
    assert ANSI not in r.stdout
    assert "== reasoning (" in r.stdout and "== content (" in r.stdout


def test_split_colour_forced_and_no_color_env():
    assert ANSI in run("split", "--color", "always").stdout
    assert ANSI not in run("split", "--color", "auto", env=_env(NO_COLOR="1")).stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pty check is Linux-only")
def test_split_colour_on_a_terminal():
    import pty

    def on_tty(env):
        master, slave = pty.openpty()
        try:
            p = subprocess.Popen([sys.executable, "-m", "reasoning_core.cli", "split", "-"], stdin=subprocess.PIPE,
                                 stdout=slave, stderr=subprocess.DEVNULL, env=env)
            os.close(slave)
            p.stdin.write("<think>why</think>because".encode())
            p.stdin.close()
            chunks = []
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO once the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            assert p.wait(timeout=60) == 0
        finally:
            os.close(master)
        return b"".join(chunks).decode()

    assert ANSI in on_tty(_env())
    assert ANSI not in on_tty(_env(NO_COLOR="1"))


def test_split_stdin_and_file(tmp_path):
    r = run("split", "-", "--json", stdin="<think>weigh it</think>It is 4.")
    out = json.loads(r.stdout)
    assert (out["reasoning"], out["content"]) == ("weigh it", "It is 4.")
    f = tmp_path / "c.txt"
    f.write_text("<think>a</think>b", encoding="utf-8")
    out = json.loads(run("split", str(f), "--json").stdout)
    assert (out["reasoning"], out["content"]) == ("a", "b")


def test_split_parser_model_and_prompt_start():
    # qwen3 starts in content: without a start delimiter everything is content...
    out = json.loads(run("split", "-", "--json", "--parser", "qwen3", stdin="thinking</think>answer").stdout)
    assert out["parser"] == "qwen3" and out["reasoning"] == "" and "answer" in out["content"]
    # ...unless the prompt ended inside reasoning.
    out = json.loads(run("split", "-", "--json", "--model", "Qwen/Qwen3-8B", "--prompt-starts-reasoning",
                         stdin="thinking</think>answer").stdout)
    assert (out["parser"], out["reasoning"], out["content"]) == ("qwen3", "thinking", "answer")


def test_split_python_backend():
    out = json.loads(run("split", "--json", "--backend", "python").stdout)
    assert out["backend"] == "python" and out["reasoning"] and out["content"]


def test_split_custom_tokenizer(tmp_path):
    from tokenizers import Tokenizer

    from vocab import family_tokenizer

    path = tmp_path / "tokenizer.json"
    family_tokenizer("mistral").save(str(path))
    assert isinstance(Tokenizer.from_file(str(path)), Tokenizer)
    out = json.loads(run("split", "-", "--json", "-p", "mistral", "-t", str(path),
                         stdin="[THINK]think about it[/THINK]The answer is 4.").stdout)
    assert (out["reasoning"], out["content"]) == ("think about it", "The answer is 4.")


# -- stream ------------------------------------------------------------------------------------

def test_stream_lines_are_openai_deltas():
    r = run("stream")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(lines) > 1000  # one per token (minus the delimiters and empty steps)
    assert all(set(d) <= {"reasoning", "content"} and d for d in lines)
    split = json.loads(run("split", "--json").stdout)
    assert "".join(d.get("reasoning", "") for d in lines) == split["reasoning"]
    assert "".join(d.get("content", "") for d in lines) == split["content"]


def test_stream_chunk_and_field():
    r = run("stream", "-", "--chunk", "4", "--field", "reasoning_content",
            stdin="<think>one two three four five</think>six seven eight")
    lines = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert all(set(d) <= {"reasoning_content", "content"} for d in lines)
    assert "".join(d.get("reasoning_content", "") for d in lines) == "one two three four five"
    assert "".join(d.get("content", "") for d in lines) == "six seven eight"


# -- families / detect ---------------------------------------------------------------------

def test_families_json():
    r = run("families", "--json")
    assert r.returncode == 0
    rows = json.loads(r.stdout)
    names = {row["name"] for row in rows}
    assert {"deepseek_r1", "qwen3", "gpt_oss", "gemma4", "passthrough"} <= names
    for row in rows:
        assert {"name", "aliases", "start", "end", "terminators", "starts_in", "model_patterns"} <= set(row)
    r1 = next(row for row in rows if row["name"] == "deepseek_r1")
    assert r1["start"] == ["<think>"] and r1["end"] == ["</think>"] and r1["starts_in"] == "reasoning"
    from reasoning_core.families import FAMILIES

    assert {row["name"]: row["tool_parser"] for row in rows} == {n: f.tool_parser for n, f in FAMILIES.items()}
    assert next(row for row in rows if row["name"] == "deepseek_v4")["tool_parser"] == "deepseekv4"


def test_families_table():
    r = run("families")
    assert r.returncode == 0 and ANSI not in r.stdout
    assert r.stdout.splitlines()[0].split()[:2] == ["name", "aliases"]
    assert "deepseek_r1" in r.stdout and "[THINK]" in r.stdout
    assert "tool format" in r.stdout.splitlines()[0] and "qwen3_coder" in r.stdout


@pytest.mark.parametrize("model, name", [
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek_r1"),
    ("Qwen/Qwen3-8B", "qwen3"),
    ("openai/gpt-oss-20b", "gpt_oss"),
    ("someone/unknown-model", "passthrough"),
])
def test_detect(model, name):
    r = run("detect", model)
    assert (r.returncode, r.stdout.strip()) == (0, name)


def test_detect_config_file(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    assert run("detect", str(tmp_path)).stdout.strip() == "qwen3"


# -- errors ------------------------------------------------------------------------------------

def _one_line_error(r, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize("args", [
    ("nosuchcommand",),
    (),
    ("split", "--chunk", "3"),
    ("stream", "--chunk", "0"),
    ("stream", "--chunk", "x"),
    ("split", "--model", "someone/unknown-model"),  # no family matches and no --parser
    ("split", "--backend", "fortran"),
    ("detect",),
    ("bench", "--only", "no_such_workload"),
    ("bench", "--peers"),  # peers are benchmarks/run.py's, not the installed command's
])
def test_bad_arguments_exit_2(args):
    _one_line_error(run(*args), 2)


def test_unknown_parser_names_the_closest_and_points_to_families():
    line = _one_line_error(run("split", "--parser", "deepseek-r"), 2)
    assert "deepseek-r" in line and "deepseek-r1" in line and "reasoning-core families" in line
    assert len(line) < 200  # not the whole list of names


def test_unreadable_file_exit_1(tmp_path):
    missing = tmp_path / "missing.txt"
    assert str(missing) in _one_line_error(run("split", str(missing)), 1)
    assert str(tmp_path) in _one_line_error(run("stream", str(tmp_path)), 1)  # a directory
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    assert str(bad) in _one_line_error(run("split", str(bad)), 1)


def test_unreadable_tokenizer_exit_1(tmp_path):
    missing = tmp_path / "tokenizer.json"
    assert str(missing) in _one_line_error(run("split", "-t", str(missing)), 1)
    missing.write_text("not json")
    assert str(missing) in _one_line_error(run("split", "-t", str(missing)), 1)


# -- installation -----------------------------------------------------------------------------

def test_console_script_installed():
    from importlib import metadata

    try:
        dist = metadata.distribution("reasoning-spans")
    except metadata.PackageNotFoundError:
        pytest.skip("reasoning-spans is not installed (running from a bare checkout)")
    eps = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    assert eps.get("reasoning-core") == "reasoning_core.cli:main"
    script = Path(sys.executable).parent / ("reasoning-core.exe" if os.name == "nt" else "reasoning-core")
    if not script.exists():
        pytest.skip(f"console script not in {script.parent} (installed elsewhere)")
    r = subprocess.run([str(script), "detect", "Qwen/Qwen3-8B"], capture_output=True, text=True, env=_env(),
                       timeout=60)
    assert (r.returncode, r.stdout.strip()) == (0, "qwen3")


# -- bench smoke ------------------------------------------------------------------------------

def test_bench_quick_smoke(tmp_path):
    """Shape only: every core workload in the table and the JSON, never the timings.

    The full runner (every workload, peers, targets) is benchmarks/run.py; its
    smoke test is benchmarks/test_run.py."""
    out = tmp_path / "bench.json"
    r = run("bench", "--quick", "--repeat", "1", "--scale", "0.01", "--json", str(out), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "1/" in r.stderr  # the progress indicator
    header = next(ln for ln in r.stdout.splitlines() if ln.startswith("workload"))
    assert header.split() == ["workload", "unit", "compiled", "median", "pure", "median", "pure/compiled",
                              "compiled", "ns/unit", "pure", "ns/unit"]
    assert set(_bench.WORKLOADS) == {"stream_1tok", "bulk_split_numpy_1M", "batch_step_1024", "text_feed_1tok"}
    for name in _bench.WORKLOADS:
        assert any(ln.startswith(name + " ") for ln in r.stdout.splitlines()), name
    assert "peer" not in r.stdout and "goal" not in r.stdout  # the installed library alone, no targets

    data = json.loads(out.read_text(encoding="utf-8"))
    assert {"reasoning_core", "parser", "quick", "settings", "backends", "machine", "workloads", "notes"} <= set(data)
    assert "targets" not in data
    assert {"cpu", "nproc", "python"} <= set(data["machine"])
    rows = {w["workload"]: w for w in data["workloads"]}
    assert set(rows) == set(_bench.WORKLOADS)
    for w in rows.values():
        assert {"unit", "kind", "units", "results", "ratio_pure_over_compiled", "notes"} <= set(w)
        assert not [n for n in w["notes"] if "failed" in n], w["notes"]
        backends = set(w["results"])
        assert backends == set(data["backends"]) and backends <= {"cython", "python"}, w
        for res in w["results"].values():
            assert {"median_ns", "per_unit_ns", "repeats", "loops"} <= set(res)


def test_package_imports_no_serving_engine():
    # Peer adapters live in benchmarks/: no module in the package imports a serving
    # engine (a future reasoning_core/integrations/ is the one place allowed to).
    import re

    import reasoning_core

    pkg = Path(reasoning_core.__file__).parent
    pattern = re.compile(r"^\s*(?:from|import)\s+(?:vllm|sglang|max)\b|import_module\(\s*[\"'](?:vllm|sglang|max)\b",
                         re.M)
    offenders = [str(p.relative_to(pkg)) for p in pkg.rglob("*.py")
                 if "integrations" not in p.relative_to(pkg).parts and pattern.search(p.read_text(encoding="utf-8"))]
    assert not offenders


def test_bench_json_unwritable(tmp_path):
    target = tmp_path / "no" / "such" / "dir.json"
    line = _one_line_error(run("bench", "--quick", "--repeat", "1", "--scale", "0.01", "--only", "stream_1tok",
                               "--json", str(target)), 1)
    assert str(target) in line


def test_keep_special_tokens_flag(capsys):
    from reasoning_core.cli import main

    text = "<think>a</think>b<｜end▁of▁sentence｜>"
    import tempfile, pathlib

    with tempfile.TemporaryDirectory() as d:
        f = pathlib.Path(d) / "c.txt"
        f.write_text(text, encoding="utf-8")
        assert main(["split", str(f), "--json"]) == 0
        skipped = json.loads(capsys.readouterr().out)
        assert main(["split", str(f), "--json", "--keep-special-tokens"]) == 0
        kept = json.loads(capsys.readouterr().out)
    assert skipped["content"] == "b"
    assert kept["content"] == "b<｜end▁of▁sentence｜>"
