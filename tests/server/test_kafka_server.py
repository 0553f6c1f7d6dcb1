"""The broker process's contract: start, controlled stop, config errors (DESIGN.md)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from franz.server.delegation_token_control_manager import DELEGATION_TOKENS_FILE
from franz.server.garbage_collector import YOUNG_COLLECTION_THRESHOLD
from tests.support.broker import BrokerProcess, free_port
from tests.support.broker_on_thread import BrokerOnThread


def test_sigterm_is_a_controlled_shutdown_with_the_clean_marker(tmp_path):
    broker = BrokerProcess(tmp_path / "data").start()
    assert broker.stop(signal.SIGTERM) == 0
    assert (tmp_path / "data" / ".kafka_cleanshutdown").exists()
    assert "shut down completed" in broker.output()
    assert (tmp_path / "data" / "meta.properties").exists()
    broker.start()
    try:
        assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()  # removed at start
        assert "no clean shutdown file was found" not in broker.output().split("Kafka Server started")[-2]
    finally:
        broker.stop()


def _in_order(output: str, *lines: str) -> bool:
    """Whether every one of `lines` appears in `output`, each after the one before it."""
    at = 0
    for line in lines:
        at = output.find(line, at)
        if at < 0:
            return False
    return True


def test_startup_shutdown_and_recovery_lines_are_kafkas(tmp_path):
    from confluent_kafka.admin import AdminClient, NewTopic

    data = tmp_path / "data"
    broker = BrokerProcess(data).start()
    try:
        assert _in_order(broker.output(),
                         "INFO [BrokerServer id=1] Transition from SHUTDOWN to STARTING (franz.server.BrokerServer)",
                         "INFO [BrokerServer id=1] Starting broker", f"INFO No logs found to be loaded in {data} (",
                         "INFO [BrokerServer id=1] Transition from STARTING to STARTED",
                         "INFO [KafkaRaftServer nodeId=1] Kafka Server started"), broker.output()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("logged", 1, 1, config={"retention.ms": "1000000", "cleanup.policy": "compact",
                                                              "compression.type": "lz4"})])["logged"].result(30)
        assert broker.wait_for_line(f"Created log for partition logged-0 in {data / 'logged-0'} with properties "
                                    '{cleanup.policy=compact, compression.type="lz4", retention.ms=1000000}')
    finally:
        assert broker.stop(signal.SIGTERM) == 0
    assert _in_order(broker.output(), "[BrokerServer id=1] Transition from STARTED to SHUTTING_DOWN",
                     "INFO [BrokerServer id=1] shutting down", "INFO [BrokerServer id=1] shut down completed",
                     "[BrokerServer id=1] Transition from SHUTTING_DOWN to SHUTDOWN"), broker.output()
    broker.start()
    try:
        assert f"Skipping recovery of 1 logs from {data} since clean shutdown file was found" in broker.output()
    finally:
        broker.stop(signal.SIGKILL)
    broker.start()
    try:
        assert f"Recovering 1 logs from {data} since no clean shutdown file was found" in broker.output()
    finally:
        broker.stop()


def test_sigint_also_stops_cleanly(tmp_path):
    broker = BrokerProcess(tmp_path / "data").start()
    assert broker.stop(signal.SIGINT) == 0


def test_an_unknown_key_is_warned_about(tmp_path):
    broker = BrokerProcess(tmp_path / "data", {"no.such.key": "1"}).start()
    try:
        assert " WARN The configuration 'no.such.key' was supplied but isn't a known config." in broker.output()
    finally:
        broker.stop()


def test_a_bad_value_is_refused_naming_the_key(tmp_path):
    command = [sys.executable, "-m", "franz.cli.main", "server", "start",
               "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
               "--override", f"log.dirs={tmp_path}", "--override", "num.partitions=zero"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "num.partitions" in result.stderr


def _run_cli_probe(before_import: str = "", serve_body: str = "") -> subprocess.CompletedProcess:
    """run_from_cli in a child process, with `_serve` replaced by a coroutine running `serve_body`."""
    probe = ("import argparse, sys\n"
             f"{before_import}"
             "from franz.server import kafka_server\n"
             "async def serve(config):\n"
             f"{serve_body}"
             "    return 0\n"
             "kafka_server._serve = serve\n"
             "sys.exit(kafka_server.run_from_cli(argparse.Namespace(config=None, override=[])))\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)


def test_the_broker_process_hands_the_gil_over_every_half_millisecond():
    """run_from_cli shortens CPython's switch interval before it serves (see GIL_SWITCH_INTERVAL_S:
    with the default, a cleaning pass made produce latency a hundred times worse)."""
    done = _run_cli_probe(serve_body="    print(sys.getswitchinterval())\n")
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) == 0.0005


def test_the_broker_process_collects_its_young_generation_less_often():
    """run_from_cli sets the collector before it serves (see franz.server.garbage_collector)."""
    done = _run_cli_probe(serve_body="    import gc\n    print(*gc.get_threshold())\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == [str(YOUNG_COLLECTION_THRESHOLD), "10", "10"]


def test_a_broker_without_its_c_modules_says_so_once():
    """A source tree run without `pip install` lacks the modules of franz/storage's C files:
    the broker still serves (the Python paths validate and append), and its log says why it
    is slower, naming what is missing (the one-call append needs the other two)."""
    for missing in (["_validator_fast"], ["_segment_fast"], ["_unified_log_fast"],
                    ["_validator_fast", "_segment_fast", "_unified_log_fast"]):
        never_built = "".join(f"sys.modules['franz.storage.{name}'] = None  # never built\n" for name in missing)
        without = _run_cli_probe(before_import=never_built)
        assert without.returncode == 0, without.stderr
        output = without.stdout + without.stderr
        assert output.count("not built (`pip install -e .` builds") == 1
        assert all(f"franz.storage.{name}" in output for name in missing)
    built = _run_cli_probe()
    assert built.returncode == 0 and "not built" not in built.stdout + built.stderr

def test_a_startup_failure_is_logged_fatal_as_kafkas_broker_logs_it_and_exits_1(tmp_path):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "franz.cli.main", "server", "start",
                   "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}", "--override", f"log.dirs={tmp_path}"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "FATAL [BrokerServer id=1] Fatal error during broker startup. Prepare to shutdown" in result.stdout
    assert "Address already in use" in result.stdout
    assert "[BrokerServer id=1] shut down completed" in result.stdout


def test_a_broker_with_a_token_secret_key_sweeps_expired_tokens_every_check_interval(tmp_path):
    """QuorumController's sweep, on the broker's KafkaScheduler: a token set to expire now is
    gone from the cache and the file once the interval has passed."""
    broker = BrokerOnThread(tmp_path, {"delegation.token.secret.key": "secret",
                                       "delegation.token.expiry.check.interval.ms": "10"})
    try:
        tokens = broker.server.delegation_tokens
        created = broker.call(tokens.create_delegation_token(("User", "alice"), ("User", "alice"), [], -1))
        assert broker.call(tokens.expire_delegation_token(("User", "alice"), created["hmac"], 0))["error_code"] == 0

        async def kept() -> int:  # read on the broker's loop, where the tokens change
            return len(tokens.token_manager.token_cache.tokens())

        deadline = time.monotonic() + 30
        while broker.call(kept()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert broker.call(kept()) == 0
        assert json.loads((tmp_path / DELEGATION_TOKENS_FILE).read_text()) == []
    finally:
        broker.stop()
