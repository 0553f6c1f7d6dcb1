"""What authentication costs a connection: connections made one after another to one franz broker,
each connecting, authenticating (or not) and answering one Metadata request before it closes, over
PLAINTEXT and over SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and GSSAPI (Kerberos, against a real MIT
KDC of tests.support.kdc's; the row is skipped without MIT's tools or python-gssapi).

Run:  .venv/bin/python bench/sasl_bench.py [--connections 300] [--runs 3]

- conn/s: connections a second, one client thread, wall clock; the PLAINTEXT row is the limit the
  others chase (the same connection without authentication), measured in the same run. Each run
  takes the rows in a rotated order.
- broker ms/conn: the broker process's CPU (user + system, /proc) per connection.
The client is Python: SCRAM's client proof (PBKDF2 of 4096 iterations, scramp) and the GSSAPI
initiator (python-gssapi, service ticket cached after the first) run in it, so conn/s counts the
client's work too; broker ms/conn is the broker's alone. Neither peer broker of broker_bench serves
these mechanisms here, so there is no peer column. Figures are medians of --runs. Not a timed test.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from bench.broker_bench import Broker, broker_cpu_s  # noqa: E402
from tests.support.broker import BrokerProcess, free_port  # noqa: E402
from tests.support.kdc import REALM, MiniKdc, gssapi_authenticate  # noqa: E402
from tests.support.raw_client import RawClient  # noqa: E402

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def plain(client: RawClient) -> None:
    assert client.request(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    assert client.request(36, 2, {"auth_bytes": b"\0alice\0alice-secret"})["error_code"] == 0


def scram(client: RawClient) -> None:
    from scramp import ScramClient
    exchange = ScramClient(["SCRAM-SHA-256"], "bob", "bob-secret")
    assert client.request(17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
    first = client.request(36, 2, {"auth_bytes": exchange.get_client_first().encode()})
    exchange.set_server_first(first["auth_bytes"].decode())
    final = client.request(36, 2, {"auth_bytes": exchange.get_client_final().encode()})
    assert final["error_code"] == 0, final
    exchange.set_server_final(final["auth_bytes"].decode())


def connections_per_s(bootstrap: str, count: int, authenticate) -> float:
    start = time.perf_counter()
    for _ in range(count):
        with RawClient(bootstrap) as client:
            client.request(18, 3, {"client_software_name": "sasl-bench", "client_software_version": "1"})
            if authenticate is not None:
                authenticate(client)
            assert client.request(3, 12, METADATA_ALL)["brokers"]
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="franz-sasl-bench-") as directory, contextlib.ExitStack() as stack:
        root = Path(directory)  # what is started is stopped by `stack`, however the bench ends
        kdc: MiniKdc | None = None
        mechanisms = ["PLAIN", "SCRAM-SHA-256"]
        overrides = {"listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
                     "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
                     "inter.broker.listener.name": "PLAINTEXT", "connection.failed.authentication.delay.ms": "0"}
        try:
            if importlib.util.find_spec("gssapi") is None:
                raise RuntimeError("python-gssapi is not installed")
            kdc = MiniKdc(root / "kdc").start()
            stack.callback(kdc.stop)
        except BaseException as exc:  # pytest's Skipped without MIT's tools
            print(f"skip GSSAPI: {exc}", file=sys.stderr)
        sasl_port = free_port()
        broker = BrokerProcess(root / "data", overrides)
        if kdc is not None:
            keytab = kdc.create_principal(root / "kafka.keytab", "kafka/localhost")
            alice = kdc.create_principal(root / "alice.keytab", "alice")
            ccache = root / "alice.ccache"
            kdc.kinit("alice", alice, ccache)
            os.environ.update(kdc.environment(ccache))  # for this process's initiator
            mechanisms.append("GSSAPI")
            broker.overrides.update({
                "sasl.kerberos.service.name": "kafka",
                "listener.name.sasl_plaintext.gssapi.sasl.jaas.config":
                    'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
                    f'keyTab="{keytab}" principal="kafka/localhost@{REALM}";'})
            broker.environment.update(kdc.environment())
        broker.overrides["sasl.enabled.mechanisms"] = ",".join(mechanisms)
        broker.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
        broker.start()
        stack.callback(broker.stop)
        measured = Broker("franz", broker.bootstrap, broker)
        rows = {"PLAINTEXT": (broker.bootstrap, None), "PLAIN": (f"127.0.0.1:{sasl_port}", plain),
                "SCRAM-SHA-256": (f"127.0.0.1:{sasl_port}", scram)}
        if kdc is not None:
            rows["GSSAPI"] = (f"127.0.0.1:{sasl_port}", lambda client: gssapi_authenticate(client, ccache))
        rates: dict[str, list[float]] = {name: [] for name in rows}
        cpu: dict[str, list[float]] = {name: [] for name in rows}
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        upsertion = UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                                 b"bob-secret")
        for future in admin.alter_user_scram_credentials([upsertion]).values():
            future.result(60)
        del admin  # its connections closed before the clock starts
        for name, (bootstrap, authenticate) in rows.items():  # warm-up: caches, tickets, imports
            connections_per_s(bootstrap, 10, authenticate)
        names = list(rows)
        for run in range(args.runs):  # each run starts at another row: no row always follows the same one
            for name in names[run % len(names):] + names[:run % len(names)]:
                bootstrap, authenticate = rows[name]
                before = sum(broker_cpu_s(measured))
                rates[name].append(connections_per_s(bootstrap, args.connections, authenticate))
                cpu[name].append((sum(broker_cpu_s(measured)) - before) * 1000 / args.connections)
            print(f"run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
    limit = statistics.median(rates["PLAINTEXT"])
    print(f"{args.connections} connections per run (connect, ApiVersions, authentication, Metadata, close), "
          f"medians of {args.runs} runs")
    print(f"{'mechanism':<14} {'conn/s':>8} {'/ PLAINTEXT':>12} {'broker ms/conn':>15}")
    for name in rows:
        rate = statistics.median(rates[name])
        print(f"{name:<14} {rate:>8,.0f} {rate / limit:>12.3f} {statistics.median(cpu[name]):>15.2f}")


if __name__ == "__main__":
    main()
