"""Builds franz's one C module; everything else is in pyproject.toml.

franz/storage/_validator_fast.c is the common case of the produce path's validation
(see its header comment). franz runs without it, only slower: validator.py falls back
to its Python path when the module is missing, and the broker says so at start. So the
module is optional: on a machine without a C compiler, `pip install` warns and goes on.
CI fails instead (tests/storage/test_validator_fast.py::test_the_native_module_is_built)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("franz.storage._validator_fast", ["franz/storage/_validator_fast.c"],
                             extra_compile_args=["-Wextra"], optional=True)])
