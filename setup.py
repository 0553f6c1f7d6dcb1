"""Builds franz's C modules; everything else is in pyproject.toml.

Three modules carry the produce path's common case (see their header comments):
franz/storage/_validator_fast.c validates and stamps a client's batch,
franz/storage/_segment_fast.c appends it to the active segment, and
franz/storage/_unified_log_fast.c runs the two in one call for UnifiedLog.append_as_leader.
franz runs without them, only slower: validator.py, local_log.py and unified_log.py fall
back to their Python paths when a module is missing, and the broker says so at start. So
the modules are optional: on a machine without a C compiler, `pip install` warns and goes
on. CI fails instead (test_the_native_module_is_built in tests/storage/test_validator_fast.py,
test_segment_fast.py and test_unified_log_fast.py)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(f"franz.storage.{name}", [f"franz/storage/{name}.c"],
                             depends=["franz/storage/_fast_common.h"], extra_compile_args=["-Wextra"], optional=True)
                   for name in ("_validator_fast", "_segment_fast", "_unified_log_fast")])
