"""What a first call costs after the caches went cold, compiled or Python (issue 26).

    PYTHONPATH=$PWD /tmp/peers/venv/bin/python benchmarks/bench_cold_calls.py [--engines]

The 2 KB cells of ``bench_tools_engines.py`` time each stream after a
``gc.collect()``, whose walk over every object of the process leaves the CPU's
caches (and the page-table walks behind them) cold.  A call's structural
points (a call opening, a parameter closing) then each cost tens of µs where
they cost a few warm.  This asks whether compiling those points would help:
each function below is called once right after a collection (cold) and again
at once (warm), 15 times, and the medians are printed in µs:

* ``len(s)``, a builtin, and a two-line Python function: the floor of any call;
* the compiled scanner's ``xml_params`` reading a whole ``qwen3_coder`` call's
  parameters, and a Python loop of ``str.find`` doing about the same reading;
* each of them again after some unrelated Python work (the interpreter's own
  code and data warm again, ours still cold).

``--engines`` imports vLLM, SGLang and MAX first (the peers venv): a process
the size of a serving one, whose collection touches far more memory.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BUF = ("<parameter=path>\nsrc/report.py\n</parameter>\n<parameter=content>\ndef report(values):\n"
       "    return sum(values)\n</parameter>\n</function>\n</tool_call>")


def _python_params(buf: str) -> list:
    out = []
    i = buf.find("<parameter=")
    while i >= 0:
        j = buf.find(">", i)
        k = buf.find("</parameter>", j)
        out.append((buf[i + 11:j], buf[j + 1:k].strip()))
        i = buf.find("<parameter=", k)
    return out


def _tiny(a, b):
    return a + b


def _unrelated() -> list:
    d = {}
    for i in range(200):
        d[str(i)] = [i] * 3
    return sorted(d)


def cases():
    from reasoning_core.tools import _base, _json
    from reasoning_core.tools._xml_formats import Qwen3CoderToolParser as Q

    scan = _base._scan
    args = (BUF, 0, "<parameter=", ">", "</parameter>", Q._PARAM_SCAN, Q._KEY_END, Q._VALUE_END, str.strip)
    return [("len(s), a builtin", len, (BUF,)), ("a two-line Python function", _tiny, (1, 2)),
            (f"xml_params ({_json.SCAN_BACKEND} scanner)", scan.xml_params, args),
            ("the same reading in Python (str.find)", _python_params, (BUF,))]


def measure(repeats: int = 15, warm_interpreter: bool = False) -> list[tuple[str, float, float]]:
    clock = time.perf_counter
    rows = []
    for name, f, a in cases():
        cold, warm = [], []
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            try:
                if warm_interpreter:
                    _unrelated()
                    _unrelated()
                t0 = clock()
                f(*a)
                t1 = clock()
                f(*a)
                t2 = clock()
            finally:
                gc.enable()
            cold.append((t1 - t0) * 1e6)
            warm.append((t2 - t1) * 1e6)
        rows.append((name, statistics.median(cold), statistics.median(warm)))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/bench_cold_calls.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", action="store_true", help="import vLLM, SGLang and MAX first (the peers venv)")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    if args.engines:
        import bench_tools_engines as B

        B._quiet_imports()
        for make in (B.vllm_runner, B.sglang_runner, B.max_runner):
            make("qwen3_coder" if make is not B.max_runner else "qwen3_5")
    objects = len(gc.get_objects())
    print(f"{objects:,} objects tracked by the collector")
    print("| call | after a collection µs | again at once µs | after a collection and other Python work µs |")
    print("|---|---:|---:|---:|")
    plain = measure(args.repeats)
    other = measure(args.repeats, warm_interpreter=True)
    for (name, cold, warm), (_, cold2, _w) in zip(plain, other):
        print(f"| {name} | {cold:.1f} | {warm:.1f} | {cold2:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
