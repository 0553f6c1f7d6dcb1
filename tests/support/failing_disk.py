"""Real disk errors for tests, made without privileges.

descriptor_swapped points an open log file's descriptor at another file for a while, so that
the kernel fails the log's own syscalls: /dev/null fails fsync (EINVAL) and, opened read-only,
writes (EBADF); a directory fails pread (EISDIR). file_size_limited sets this process's
RLIMIT_FSIZE: Python ignores SIGXFSZ, so a write past it fails with EFBIG, as on a full disk.
Both put everything back when their block ends."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
