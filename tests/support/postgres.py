"""A PostgreSQL server of Debian's packages on a free 127.0.0.1 port, for tests that need a real
database (Debezium's change data capture): its own cluster in a temporary directory, with
logical decoding on, trusting local connections, stopped and removed at the end.

PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user the
package makes; its directory is made outside pytest's (which only root may enter).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.broker import free_port

TIMEOUT_S = 60


def server_binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory, None when there is none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.directory = Path(tempfile.mkdtemp(prefix="franz-postgres-"))
        self.data = self.directory / "data"

    def _as_owner(self, *command: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)

    def start(self) -> PostgresServer:
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres")
        subprocess.run(self._as_owner(str(self.binaries / "initdb"), "-D", str(self.data), "-A", "trust",
                                      "-U", "postgres"), check=True, capture_output=True, timeout=TIMEOUT_S)
        options = (f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c wal_level=logical "
                   f"-c max_wal_senders=4 -c max_replication_slots=4")
        subprocess.run(self._as_owner(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-o", options, "-w",
                                      "-l", str(self.directory / "server.log"), "start"),
                       check=True, capture_output=True, timeout=TIMEOUT_S)
        return self

    def sql(self, statements: str) -> str:
        result = subprocess.run([str(self.binaries / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                                 "-v", "ON_ERROR_STOP=1", "-At", "-c", statements],
                                check=True, capture_output=True, text=True, timeout=TIMEOUT_S)
        return result.stdout

    def stop(self) -> None:
        subprocess.run(self._as_owner(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                                      "stop"), capture_output=True, timeout=TIMEOUT_S)
        shutil.rmtree(self.directory, ignore_errors=True)
