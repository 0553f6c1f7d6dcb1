"""Builds franz's one C module; everything else is in pyproject.toml.

franz/storage/_validator_fast.c is the common case of the produce path's validation
(see its header comment). franz runs without it, only slower: validator.py falls back
to its Python path when the module is missing."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("franz.storage._validator_fast", ["franz/storage/_validator_fast.c"],
                             extra_compile_args=["-Wextra"])])
