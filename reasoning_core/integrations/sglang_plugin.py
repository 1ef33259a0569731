"""SGLang plugin: reasoning-core's detectors on SGLang's command line.

The package declares ``load`` as an ``sglang.srt.plugins`` entry point.  SGLang
runs every such entry point (``sglang.srt.plugins.load_plugins``) in each of
its processes, and ``sglang serve`` / ``python -m sglang.launch_server`` do it
before parsing arguments; its ``--reasoning-parser`` / ``--tool-call-parser``
choices are read from the detector maps at that moment.  So, with the package
installed, and nothing else:

* ``sglang serve ... --reasoning-parser rc_qwen3 --tool-call-parser rc_qwen25``
  selects our detectors under ``rc_`` names;
* ``REASONING_CORE_REPLACE=1 sglang serve ... --reasoning-parser qwen3
  --tool-call-parser qwen25`` puts ours under SGLang's own names (the ``rc_``
  names stay too), so everything SGLang's serving layer decides from the
  parser's *name* (Kimi-K2 tool-call ids, ``skip_special_tokens`` for
  mistral / apertus2509 / kimi_k3 / inkling / muse, thinking switches of
  minimax-m3 / iquest_q1 / hunyuan, K2 Horizon's first reasoning delta, ...)
  stays as with SGLang's detector.

``SGLANG_PLUGINS`` (SGLang's own whitelist) selects this plugin by its entry
point name, ``reasoning_core``.  This module imports nothing heavy: SGLang
imports it in every process, and only ``load()`` imports SGLang's parser
modules.
"""
from __future__ import annotations

from . import REPLACE_ENV, replace_requested  # noqa: F401  (REPLACE_ENV: the switch's name)


def load() -> None:
    """The ``sglang.srt.plugins`` entry point: registers ``rc_<name>`` for
    every detector, and SGLang's own names too when ``REASONING_CORE_REPLACE``
    is set (to anything but empty or ``0``).  Idempotent."""
    from . import sglang as rcs

    rcs.register()
    if replace_requested():
        rcs.register(replace=True)
