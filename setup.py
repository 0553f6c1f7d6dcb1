"""Builds franz's two C modules; everything else is in pyproject.toml.

franz/storage/_validator_fast.c is the common case of the produce path's validation, and
franz/storage/_segment_fast.c the common case of the active segment's append (see their
header comments). franz runs without them, only slower: validator.py and unified_log.py
fall back to their Python paths when a module is missing, and the broker says so at
start. So the modules are optional: on a machine without a C compiler, `pip install`
warns and goes on. CI fails instead (test_the_native_module_is_built in
tests/storage/test_validator_fast.py and tests/storage/test_segment_fast.py)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(f"franz.storage.{name}", [f"franz/storage/{name}.c"], extra_compile_args=["-Wextra"],
                             optional=True)
                   for name in ("_validator_fast", "_segment_fast")])
