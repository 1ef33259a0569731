"""Coverage-guided fuzzing of reasoning-core with atheris (libFuzzer for Python).

Targets (``tests/fuzz/targets.py``), one per area; each turns the fuzz bytes
into a structured case and checks it:

- ``engine``:  random tables + token stream + chunking + a program of engine
  calls: compiled and pure engines agree on every result, exception type and
  state; ``split()`` conserves tokens and ignores chunking (SPEC §4.1).
- ``batch``:   random tables + a program of open/step/step_ragged/finish/close:
  every ``BatchStepResult`` field and every slot's state agree across backends.
- ``text``:    a family's delimiter strings, fragments and noise, chunked:
  streamed text equals ``parse()``, and both backends agree.
- ``decoder``: token ids from a small offline vocabulary (``tests/vocab.py``),
  chunked: ``ReasoningStreamDecoder`` gives the same deltas on both backends.
- ``tools``:   marker soup for every ``reasoning_core.tools.available()`` name:
  streaming never raises, chunking does not change the stream, text before the
  first marker is content verbatim, and ``parse_complete`` agrees with the stream.
- ``vllm``, ``sglang``, ``max`` (``integration_targets.py``; need the engines,
  e.g. the peers venv): each engine's reasoning classes fed hostile programs
  (empty deltas, ids outside the vocabulary, text without ids, multi-token
  steps, one-shot calls, reset/finish in any order, reused instances): nothing
  raises, and compiled and pure instances agree call by call.  Not part of
  ``all``; ``tests/fuzz/test_fuzz_integrations.py`` runs each for
  ``REASONING_CORE_INTEGRATION_FUZZ_SECONDS`` (default 10) seconds.
- ``vllm_tools``, ``sglang_tools``, ``max_tools``, ``mlx_tools``
  (``tool_targets.py``; need the engines, vllm-mlx for ``mlx_tools``): each
  engine's tool-parser classes fed hostile model output (marker soup, partial
  markers, invalid JSON, huge and odd names, empty deltas, reused instances,
  end-of-stream hooks in any order): nothing raises, compiled and pure
  scanners agree call by call, the wrapper streams what the format's own
  parser streams, a fresh vLLM or SGLang instance fed the whole response in
  one delta streams exactly the same, and a well-formed output streams as it
  parses one-shot.
  The pytest entry runs each engine's reasoning and tool targets in one
  process (``vllm+vllm_tools``, ...: the first input byte picks), and
  ``mlx_tools`` where vllm-mlx imports.

Run (from the repository root, with ``pip install atheris``)::

    python tests/fuzz/run.py engine --seconds 120     # one target for 2 minutes
    python tests/fuzz/run.py all --seconds 600        # every target, 10 minutes in all
    python tests/fuzz/run.py engine CRASH_FILE        # replay a saved input
    python tests/fuzz/run.py engine --show CRASH_FILE # print the decoded case

The pytest entry ``python -m pytest tests/fuzz`` runs every target for
``REASONING_CORE_FUZZ_SECONDS`` seconds in all (default 10), each in its own
subprocess, so a crash of the compiled engine (a signal) is reported as a
test failure.  Crashing inputs are written to ``--artifacts`` (default
``tests/fuzz/artifacts/``), the corpus to ``tests/fuzz/corpus/TARGET/``;
both are git-ignored.  A failure found here is minimised and pinned as an
``@example`` in ``tests/test_differential.py``.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("engine", "batch", "text", "decoder", "tools")
# The serving engines' classes (tests/fuzz/integration_targets.py): they need
# the engines installed (the peers venv), so the default run leaves them out.
INTEGRATION_NAMES = ("vllm", "sglang", "max", "vllm_tools", "sglang_tools", "max_tools", "mlx_tools")
TOOL_TARGET_NAMES = ("vllm_tools", "sglang_tools", "max_tools", "mlx_tools")  # in tests/fuzz/tool_targets.py
# One process for an engine's reasoning and tool targets (the first input byte
# picks which): what CI runs, so that it pays each engine's import once.
COMBINED_NAMES = ("vllm+vllm_tools", "sglang+sglang_tools", "max+max_tools")


def _integration_check(target: str):
    """The check of an integration target (``a+b``: both, the first byte picks),
    its engine imported and its vocabularies built."""
    parts = target.split("+")
    checks = []
    for part in parts:
        if part in TOOL_TARGET_NAMES:
            import tool_targets as mod
        else:
            import integration_targets as mod
        mod.prepare(part)
        checks.append(mod.TARGETS[part])
    if len(checks) == 1:
        return checks[0]

    def check(data: bytes) -> None:
        if data:
            checks[data[0] % len(checks)](data[1:])

    return check


def _fuzz_one(target: str, seconds: float, artifacts: str, corpus: str | None, files: list[str],
              runs: int | None) -> int:
    import atheris

    with atheris.instrument_imports(include=["reasoning_core", "reasoning_core_py"]):
        sys.path.insert(0, HERE)
        import targets

        if target in INTEGRATION_NAMES + COMBINED_NAMES:
            check = _integration_check(target)  # engine imports and vocabularies, before the clock
        else:
            check = targets.TARGETS[target]
    if target == "decoder":  # train the small vocabularies before the clock starts
        from vocab import family_tokenizer

        for name in targets.DECODER_FAMILIES:
            family_tokenizer(name)

    def one_input(data: bytes) -> None:
        check(data)

    argv = [sys.argv[0], f"-artifact_prefix={artifacts.rstrip('/')}/{target}-", "-print_final_stats=1",
            "-timeout=60", "-rss_limit_mb=4096", "-max_len=512"]
    if files:
        argv += files
    else:
        argv.append(f"-max_total_time={max(1, int(seconds))}")
        if runs is not None:
            argv.append(f"-runs={runs}")
        if corpus:
            os.makedirs(corpus, exist_ok=True)
            argv.append(corpus)
    os.makedirs(artifacts, exist_ok=True)
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
    return 0


def run_target(target: str, seconds: float, artifacts: str, corpus: str | None = None,
               env: dict | None = None) -> tuple[int, int, str]:
    """Fuzz ``target`` in a subprocess: (exit code, executions, output tail)."""
    cmd = [sys.executable, os.path.abspath(__file__), target, "--seconds", str(seconds),
           "--artifacts", artifacts, "--child"]
    if corpus:
        cmd += ["--corpus", corpus]
    if env is None:
        # MAX's import sets PYTHONEXECUTABLE (the base interpreter) in this
        # process's environment: a child given it would lose its venv.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONEXECUTABLE"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=seconds + 300)
    out = proc.stdout + proc.stderr
    m = re.findall(r"stat::number_of_executed_units:\s*(\d+)", out) or re.findall(r"Done (\d+) runs", out)
    return proc.returncode, int(m[-1]) if m else 0, out[-6000:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", choices=NAMES + INTEGRATION_NAMES + COMBINED_NAMES + ("all",))
    ap.add_argument("files", nargs="*", help="inputs to replay instead of fuzzing")
    ap.add_argument("--seconds", type=float, default=60.0, help="fuzzing time (for 'all': in total)")
    ap.add_argument("--artifacts", default=os.path.join(HERE, "artifacts"))
    ap.add_argument("--corpus", default=None, help="corpus directory (default tests/fuzz/corpus/TARGET)")
    ap.add_argument("--show", action="store_true", help="print the decoded case of each file and exit")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_intermixed_args(argv)

    if args.show:
        sys.path.insert(0, HERE)
        import targets

        for f in args.files:
            with open(f, "rb") as fh:
                print(f, "->", repr(targets.CASES[args.target](fh.read())))
        return 0
    if args.target == "all" or not (args.child or args.files):
        names = NAMES if args.target == "all" else (args.target,)
        per = args.seconds / len(names)
        worst = 0
        for name in names:
            corpus = args.corpus or os.path.join(HERE, "corpus", name)
            t0 = time.monotonic()
            code, execs, tail = run_target(name, per, args.artifacts, corpus)
            status = "ok" if code == 0 else f"FAILED (exit {code})"
            print(f"{name}: {execs} executions in {time.monotonic() - t0:.0f} s: {status}", flush=True)
            if code:
                print(tail)
                worst = code
        return worst
    return _fuzz_one(args.target, args.seconds, args.artifacts, args.corpus, args.files, None)


if __name__ == "__main__":
    sys.exit(main())
