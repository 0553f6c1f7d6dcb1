"""Real disk errors for tests, made without privileges.

descriptor_swapped points an open log file's descriptor at another file for a while, so that
the kernel fails the log's own syscalls: /dev/null fails fsync (EINVAL) and, opened read-only,
writes (EBADF); a directory fails pread (EISDIR). file_size_limited sets this process's
RLIMIT_FSIZE: Python ignores SIGXFSZ, so a write past it fails with EFBIG, as on a full disk.
immutable_dir sets a directory's immutable flag (chattr +i, root only), so that no entry of it
can be renamed, made or removed (EPERM). All put everything back when their block ends."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def descriptor_swapped(descriptor: int, path: str | Path, flags: int = os.O_RDONLY) -> Iterator[None]:
    """`descriptor` refers to `path` (opened with `flags`) inside the block, to its own file again after."""
    saved = os.dup(descriptor)
    replacement = os.open(path, flags)
    try:
        os.dup2(replacement, descriptor)
        yield
    finally:
        os.dup2(saved, descriptor)
        os.close(saved)
        os.close(replacement)


@contextmanager
def file_size_limited(limit_bytes: int) -> Iterator[None]:
    """This process's writes past `limit_bytes` of any file fail with EFBIG inside the block."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@contextmanager
def immutable_dir(directory: str | Path) -> Iterator[None]:
    """No entry of `directory` can be renamed, made or removed inside the block. Skips the test
    where that cannot be had (not root, no chattr, a filesystem without the flag)."""
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("chattr +i needs root and the chattr tool")
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode != 0:
        pytest.skip(f"this filesystem refuses chattr +i on {directory}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)
