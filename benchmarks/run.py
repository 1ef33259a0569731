"""Print the compiled-vs-pure comparison table (same workloads as the pytest suite).

    python benchmarks/run.py            # full run, a few minutes
    python benchmarks/run.py --quick    # well under a minute
    python benchmarks/run.py --markdown --json results.json

This is ``reasoning-core bench``; it lives here too so the suite is runnable
from a checkout without the console script on PATH.
"""
import sys

from reasoning_core.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
