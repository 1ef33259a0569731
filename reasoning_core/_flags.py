"""Environment flags, read the same way at install time (setup.py) and at run time.

A flag is on when its variable is set to anything but the empty string or
``0`` (surrounding whitespace ignored).  This module imports nothing, so
``setup.py`` can load it by path before the package is built.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional


def env_flag(name: str, environ: Optional[Mapping[str, str]] = None) -> bool:
    value = (os.environ if environ is None else environ).get(name, "").strip()
    return value not in ("", "0")
