"""Declares the compiled engine; everything else lives in pyproject.toml.

Set REASONING_CORE_NO_EXTENSIONS=1 at install time to skip compiling (the
pure-Python twin is then used at run time).  The flag is read by
``reasoning_core/_flags.py``, the same function the run-time dispatcher uses.
"""
import importlib.util
import os

from setuptools import setup

_spec = importlib.util.spec_from_file_location(
    "_reasoning_core_flags", os.path.join(os.path.dirname(os.path.abspath(__file__)), "reasoning_core", "_flags.py")
)
_flags = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_flags)
env_flag = _flags.env_flag

ext_modules = []
if not env_flag("REASONING_CORE_NO_EXTENSIONS"):
    import numpy
    from Cython.Build import cythonize
    from setuptools import Extension

    ext_modules = cythonize(
        [
            Extension(
                "reasoning_core._engine",
                ["reasoning_core/_engine.pyx"],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=["-O3"],
            )
        ],
        compiler_directives={"language_level": 3, "embedsignature": True},
    )

setup(ext_modules=ext_modules)
