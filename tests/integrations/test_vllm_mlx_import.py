"""Without vllm-mlx, importing the adapter raises ImportError naming it (and
the core never imports it).  Runs everywhere: vllm-mlx is hidden in a child
process."""
from __future__ import annotations

import os
import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def test_import_without_vllm_mlx_names_it():
    r = _run("import sys\n"
             "sys.modules['vllm_mlx'] = None\n"
             "try:\n"
             "    import reasoning_core.integrations.vllm_mlx\n"
             "except ImportError as e:\n"
             "    print('IMPORTERROR', e)\n")
    assert r.returncode == 0, r.stderr
    assert "IMPORTERROR" in r.stdout and "vllm-mlx" in r.stdout


def test_core_does_not_import_vllm_mlx():
    r = _run("import sys, reasoning_core, reasoning_core.tools, reasoning_core.text\n"
             "print(any(m == 'vllm_mlx' or m.startswith('vllm_mlx.') for m in sys.modules))\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
