"""A real MIT Kerberos KDC for tests, as Kafka's own tests run MiniKdc: a realm of its own in a
temporary directory, krb5kdc listening on 127.0.0.1 (TCP and UDP on one free port), principals with
random keys exported to keytabs by kadmin.local. Clients and brokers find it through the
krb5.conf it writes (KRB5_CONFIG for MIT's libraries and kinit, -Djava.security.krb5.conf for
Java). scripts/test installs the Debian packages; without them the tests that need a KDC skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.broker import free_port

REALM = "FRANZ.TEST"
START_DEADLINE_S = 10
COMMAND_TIMEOUT_S = 60


def _tool(name: str) -> str | None:
    """MIT's tools live in /usr/sbin, which a non-root PATH may lack."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")


class MiniKdc:
    def __init__(self, work_dir: Path, realm: str = REALM) -> None:
        self.work_dir = work_dir
        self.realm = realm
        self.port = free_port()
        self.krb5_conf = work_dir / "krb5.conf"
        self._kdc_conf = work_dir / "kdc.conf"
        self._process: subprocess.Popen | None = None

    @staticmethod
    def skip_unless_installed() -> None:
        missing = [tool for tool in ("krb5kdc", "kdb5_util", "kadmin.local", "kinit") if _tool(tool) is None]
        if missing:
            pytest.skip(f"MIT Kerberos tools missing: {', '.join(missing)} (scripts/test installs them)")

    def environment(self, ccache: Path | None = None) -> dict[str, str]:
        """What MIT's libraries of a client or broker process need to find this realm."""
        env = {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self._kdc_conf),
               # each test's own replay cache, so that no run meets another's entries
               "KRB5RCACHEDIR": str(self.work_dir)}
        if ccache is not None:
            env["KRB5CCNAME"] = f"FILE:{ccache}"
        return env

    def start(self) -> MiniKdc:
        self.skip_unless_installed()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        # rdns off and no DNS lookups: every client asks for kafka/<the host it was given>
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"    default_realm = {self.realm}\n"
            "    dns_lookup_kdc = false\n    dns_lookup_realm = false\n    rdns = false\n"
            "    dns_canonicalize_hostname = false\n    udp_preference_limit = 1\n"
            "[realms]\n"
            f"    {self.realm} = {{\n        kdc = 127.0.0.1:{self.port}\n    }}\n")
        self._kdc_conf.write_text(
            "[kdcdefaults]\n"
            f"    kdc_listen = 127.0.0.1:{self.port}\n    kdc_tcp_listen = 127.0.0.1:{self.port}\n"
            "[realms]\n"
            f"    {self.realm} = {{\n"
            f"        database_name = {self.work_dir / 'principal'}\n"
            f"        key_stash_file = {self.work_dir / 'stash'}\n"
            f"        acl_file = {self.work_dir / 'kadm5.acl'}\n"
            "    }\n"
            "[logging]\n"
            f"    kdc = FILE:{self.work_dir / 'kdc.log'}\n")
        self._run(_tool("kdb5_util"), "create", "-s", "-r", self.realm, "-P", "master-secret")
        self._process = subprocess.Popen([_tool("krb5kdc"), "-n", "-r", self.realm],
                                         env={**os.environ, **self.environment()}, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"krb5kdc did not start: {(self.work_dir / 'kdc.log').read_text()[-500:]}")
                time.sleep(0.05)

    def create_principal(self, keytab: Path, *principals: str) -> Path:
        """Each principal (no realm: this one's) with a random key, all exported to keytab."""
        for principal in principals:
            self._run(_tool("kadmin.local"), "-r", self.realm, "-q", f"addprinc -randkey {principal}")
            self.export_keytab(keytab, principal)
        return keytab

    def export_keytab(self, keytab: Path, principal: str) -> Path:
        """kadmin's ktadd: the principal gets new random keys, added to keytab (older keytabs keep
        the old ones, which tickets issued from now on no longer match)."""
        self._run(_tool("kadmin.local"), "-r", self.realm, "-q", f"ktadd -k {keytab} {principal}")
        return keytab

    def kinit(self, principal: str, keytab: Path, ccache: Path) -> None:
        """A ticket-granting ticket for principal in ccache (the ticket cache librdkafka's GSSAPI uses)."""
        self._run(_tool("kinit"), "-kt", str(keytab), principal, env=self.environment(ccache))

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(START_DEADLINE_S)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(START_DEADLINE_S)
        if self._process is not None and self._process.stderr is not None:
            self._process.stderr.close()

    def _run(self, *command: str | None, env: dict[str, str] | None = None) -> None:
        done = subprocess.run([str(part) for part in command], env={**os.environ, **(env or self.environment())},
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} exited {done.returncode}: {(done.stdout + done.stderr)[-500:]}")


def gssapi_authenticate(client, ccache: Path, host: str = "localhost") -> dict:
    """A raw client's GSSAPI authentication (a tests.support.raw_client.RawClient): SaslHandshake v1,
    then SaslAuthenticate v2 with the tokens of MIT's initiator (python-gssapi) holding the tickets of
    ccache, answering the broker's protection offer with "auth" as clients do; the last
    SaslAuthenticate answer (an error, or the exchange's end)."""
    gssapi = pytest.importorskip("gssapi")
    credentials = gssapi.Credentials(usage="initiate", store={"ccache": f"FILE:{ccache}"})
    initiator = gssapi.SecurityContext(name=gssapi.Name(f"kafka@{host}", gssapi.NameType.hostbased_service),
                                       creds=credentials, usage="initiate", mech=gssapi.MechType.kerberos)
    assert client.request(17, 1, {"mechanism": "GSSAPI"})["error_code"] == 0
    token = initiator.step()
    for _ in range(4):  # the context (two tokens with mutual authentication), then the offer's answer
        answer = client.request(36, 2, {"auth_bytes": token})
        if answer["error_code"] != 0 or not answer["auth_bytes"]:
            return answer
        if initiator.complete:
            offer = initiator.unwrap(answer["auth_bytes"]).message
            token = initiator.wrap(b"\x01" + offer[1:], False).message
        else:
            token = initiator.step(answer["auth_bytes"]) or b""
    raise AssertionError("the exchange did not end")
