"""Declares the compiled extensions (the engine, the tool-call scanner); everything else lives in pyproject.toml.

Install-time switches, read by ``reasoning_core/_flags.py`` exactly as the
run-time dispatcher reads them:

* ``REASONING_CORE_NO_EXTENSIONS=1`` skips compiling; the pure-Python twin is
  used at run time.
* A build that fails for any reason (no C compiler, a compiler error, neither
  Cython nor the generated C) does not fail the install: the package installs
  without the extension, one line says so, and ``reasoning_core.BACKEND`` is
  ``"python"``.  ``REASONING_CORE_REQUIRE_EXTENSIONS=1`` turns that fallback
  into an error (CI and wheel builds set it).

With Cython the engine and the tool-call scanner are compiled from
``_engine.pyx`` and ``_toolscan.pyx``; without it, from the generated ``.c``
files that the sdist ships.
"""
import importlib.util
import os
import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, PlatformError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_reasoning_core_flags", os.path.join(HERE, "reasoning_core", "_flags.py"))
_flags = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_flags)
env_flag = _flags.env_flag

DISTRIBUTION = "reasoning-spans"
# (module, source): the engine and the tool-call scanner, built and skipped together
SOURCES = (("reasoning_core._engine", "reasoning_core/_engine.pyx"),
           ("reasoning_core._toolscan", "reasoning_core/_toolscan.pyx"))
REQUIRED = env_flag("REASONING_CORE_REQUIRE_EXTENSIONS")


def _fallback(reason):
    """Go on without the extension (one line on stderr), or fail if it is required."""
    if isinstance(reason, CCompilerError):
        reason = "the C compiler failed; its output is above"
    elif isinstance(reason, PlatformError):
        reason = f"no usable C compiler: {reason}"
    elif isinstance(reason, BaseException):
        reason = f"{type(reason).__name__}: {reason}"
    reason = " ".join(str(reason).split()) or "unknown error"
    if REQUIRED:
        sys.exit(f"{DISTRIBUTION}: building the compiled engine failed ({reason}) "
                 "and REASONING_CORE_REQUIRE_EXTENSIONS is set")
    if len(reason) > 160:
        reason = reason[:157] + "..."
    # The compiler's own output (if any) is above; this is the line to read.
    print(f"{DISTRIBUTION}: compiled engine not built ({reason}); installing the pure-Python engine "
          "(reasoning_core.BACKEND == 'python'); set REASONING_CORE_REQUIRE_EXTENSIONS=1 to fail instead",
          file=sys.stderr, flush=True)


class optional_build_ext(build_ext):
    """build_ext whose failure falls back to the pure engine (see the module docstring)."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # e.g. no compiler at all (setuptools' PlatformError)
            _fallback(exc)

    def build_extension(self, ext):
        if getattr(self, "_failed", False):  # one failure skips the rest: one notice, same compiler
            self.extensions = [e for e in self.extensions if e is not ext]
            return
        try:
            import numpy

            ext.include_dirs.append(numpy.get_include())
            if self.compiler.compiler_type in ("unix", "mingw32", "cygwin"):
                ext.extra_compile_args.append("-O3")
            super().build_extension(ext)
        except Exception as exc:
            _fallback(exc)
            self._failed = True
            # Nothing to copy in place or to install for it.
            self.extensions = [e for e in self.extensions if e is not ext]


def _extensions():
    # Cython translates here (not in build_ext) so an sdist made with Cython
    # carries the generated C; building from that C needs no Cython.
    try:
        from Cython.Build import cythonize
    except ImportError:
        cythonize = None
    exts = []
    for name, pyx in SOURCES:
        generated_c = pyx[:-4] + ".c"
        if cythonize is None and not os.path.exists(os.path.join(HERE, generated_c)):
            _fallback(f"Cython is not installed and {generated_c} is missing")
            return []
        exts.append(Extension(
            name,
            [pyx if cythonize else generated_c],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        ))
    if cythonize is None:
        return exts
    try:
        return cythonize(exts, compiler_directives={"language_level": 3, "embedsignature": True})
    except BaseException as exc:  # Cython reports a failed translation as SystemExit / CompileError
        if isinstance(exc, KeyboardInterrupt):
            raise
        _fallback(f"Cython failed: {exc}")
        return []


ext_modules = []
# The engine is a CPython extension: other interpreters install the twin only
# (the run-time dispatcher makes the same choice).
if not env_flag("REASONING_CORE_NO_EXTENSIONS") and platform.python_implementation() == "CPython":
    ext_modules = _extensions()

setup(ext_modules=ext_modules, cmdclass={"build_ext": optional_build_ext})
