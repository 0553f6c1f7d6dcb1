"""A real filesystem that fails one chosen call, for the disk faults the helpers of failing_disk
cannot make: a rename that lands and then the fsync of its directory failing (EIO), so that the
new name is there and its durability is not; or a file that cannot be made at the Nth try, after
others of its name were.

A FUSE passthrough (mfusepy over libfuse3) of a backing directory, served by a child process
(libfuse installs its own signal handlers; a test process keeps Python's). The test arms one
fault (FaultSwitch.arm): the Nth `fsyncdir` or `create` of a name, counted from the arming,
answers EIO, and the switch is spent. Everything else goes to the backing directory as it is.
Mounting needs root and /dev/fuse: the context manager skips the test where it cannot mount.

Run as a module: `python -m tests.support.failing_fs BACKING MOUNTPOINT SWITCH`.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MOUNT_TIMEOUT_S = 10.0
# Broker overrides for tests that arm a fault: no periodic checkpoint (a file replaced, its dir
# fsynced) may take the armed call before the request under test makes it.
QUIET_CHECKPOINTS = {"log.flush.offset.checkpoint.interval.ms": "3600000",
                     "log.flush.start.offset.checkpoint.interval.ms": "3600000"}


class FaultSwitch:
    """The fault the mounted filesystem gives next, as a file outside the mount."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def arm(self, op: str, name: str = "*", nth: int = 1) -> None:
        """The `nth` call of `op` ("fsyncdir" or "create") on an entry called `name` (any, "*")
        from now on fails with EIO."""
        assert op in ("fsyncdir", "create") and nth >= 1
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps({"op": op, "name": name, "nth": nth}))
        os.replace(temporary, self.path)

    @property
    def spent(self) -> bool:
        return not self.path.exists()


@contextmanager
def fault_injecting_mount(base: Path) -> Iterator[tuple[Path, FaultSwitch]]:
    """(mountpoint, switch): a passthrough of base/backing mounted at base/mnt, which fails the
    call `switch` is armed for. Unmounted when the block ends."""
    import pytest

    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        pytest.skip("mounting a FUSE filesystem needs root and /dev/fuse")
    backing, mountpoint, switch = base / "backing", base / "mnt", base / "fault.json"
    backing.mkdir()
    mountpoint.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "tests.support.failing_fs", str(backing), str(mountpoint),
                               str(switch)], cwd=Path(__file__).resolve().parents[2],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while not os.path.ismount(mountpoint):
            if server.poll() is not None:
                pytest.skip(f"could not mount a FUSE filesystem: {server.stdout.read().strip()[-500:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{mountpoint} was not mounted within {MOUNT_TIMEOUT_S} s")
            time.sleep(0.02)
        yield mountpoint, FaultSwitch(switch)
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["umount", "-l", str(mountpoint)], check=False)
        try:
            server.wait(MOUNT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _serve(backing: str, mountpoint: str, switch: str) -> None:
    import mfusepy

    armed: dict = {"rule": None, "seen": 0}  # the switch's rule and the matching calls since it was armed

    def fails(op: str, path: str) -> bool:
        try:
            rule = json.loads(Path(switch).read_text())
        except FileNotFoundError:
            return False
        if rule != armed["rule"]:
            armed.update(rule=rule, seen=0)
        if rule["op"] != op or rule["name"] not in ("*", os.path.basename(path)):
            return False
        armed["seen"] += 1
        if armed["seen"] < rule["nth"]:
            return False
        os.unlink(switch)
        armed["rule"] = None
        return True

    class Passthrough(mfusepy.Operations):
        """Every call on the backing directory, as the kernel asked it, but the armed fault."""

        use_ns = True

        def _real(self, path: str) -> str:
            return os.path.join(backing, path.lstrip("/"))

        def access(self, path, amode):
            if not os.access(self._real(path), amode):
                raise mfusepy.FuseOSError(errno.EACCES)
            return 0

        def chmod(self, path, mode):
            os.chmod(self._real(path), mode)
            return 0

        def chown(self, path, uid, gid):
            os.chown(self._real(path), uid, gid)
            return 0

        def create(self, path, mode, flags):
            if fails("create", path):
                raise mfusepy.FuseOSError(errno.EIO)
            return os.open(self._real(path), flags | os.O_CREAT, mode)

        def getattr(self, path, fh=None):
            st = os.lstat(self._real(path))
            return {key: getattr(st, key) for key in (
                "st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime_ns", "st_mtime_ns", "st_ctime_ns")}

        def mkdir(self, path, mode):
            os.mkdir(self._real(path), mode)
            return 0

        def open(self, path, flags):
            return os.open(self._real(path), flags)

        def read(self, path, size, offset, fh):
            return os.pread(fh, size, offset)

        def write(self, path, data, offset, fh):
            return os.pwrite(fh, data, offset)

        def truncate(self, path, length, fh=None):
            if fh is not None:
                os.ftruncate(fh, length)
            else:
                os.truncate(self._real(path), length)
            return 0

        def flush(self, path, fh):
            return 0

        def release(self, path, fh):
            os.close(fh)
            return 0

        def fsync(self, path, datasync, fh):
            (os.fdatasync if datasync else os.fsync)(fh)
            return 0

        def opendir(self, path):
            return os.open(self._real(path), os.O_RDONLY | os.O_DIRECTORY)

        def releasedir(self, path, fh):
            os.close(fh)
            return 0

        def fsyncdir(self, path, datasync, fh):
            if fails("fsyncdir", path):
                raise mfusepy.FuseOSError(errno.EIO)
            os.fsync(fh)
            return 0

        def readdir(self, path, fh):
            return [".", ".."] + os.listdir(self._real(path))

        def rename(self, old, new):
            os.rename(self._real(old), self._real(new))
            return 0

        def rmdir(self, path):
            os.rmdir(self._real(path))
            return 0

        def unlink(self, path):
            os.unlink(self._real(path))
            return 0

        def statfs(self, path):
            st = os.statvfs(self._real(path))
            return {key: getattr(st, key) for key in (
                "f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail",
                "f_flag", "f_namemax")}

        def utimens(self, path, times=None):
            os.utime(self._real(path), ns=times)
            return 0

    mfusepy.FUSE(Passthrough(), mountpoint, foreground=True, nothreads=True)


if __name__ == "__main__":
    _serve(*sys.argv[1:4])
