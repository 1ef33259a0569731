"""Modular MAX's ``--custom-architectures`` module, shipped in the package.

MAX imports the module at ``PATH`` before it looks parser names up; importing
it registers reasoning-core's parsers (``rc_<name>``; with
``REASONING_CORE_REPLACE=1`` also under MAX's own names)::

    max serve --model-path Qwen/Qwen3.5-... \\
        --custom-architectures "$(python -m reasoning_core.integrations.max_architectures)" \\
        --reasoning-parser rc_qwen3_5 --tool-parser rc_qwen3_5

Importing this package imports nothing of MAX's.
"""
from __future__ import annotations

import os

__all__ = ["PATH", "MODULE"]

#: The module MAX imports (its ``--custom-architectures`` names a file's
#: directory and module name together, as this path does).
MODULE = "reasoning_core_max"
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), MODULE)
