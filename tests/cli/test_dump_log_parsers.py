"""`franz dump-log`'s record decoders (franz/cli/dump_log_parsers.py), run as a real command: the
coordinators' records printed as Kafka 4.3's DumpLogSegments prints them with --offsets-decoder,
--transaction-log-decoder and --share-group-state-decoder, and Kafka's tools.api decoders."""

import struct
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer

from franz.coordinator.group import consumer_protocol
from franz.coordinator.group import group_coordinator_record_serde as group_records
from franz.coordinator.share import share_coordinator_record_serde as share_records
from franz.coordinator.transaction import transaction_log
from franz.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState
from franz.records import ControlRecordType, SimpleRecord, build_batch, build_control_batch

TS = 1_700_000_000_000
TOPIC_ID = bytes(range(16))
TOPIC_ID_TEXT = "AAECAwQFBgcICQoLDA0ODw"  # Uuid.toString


def dump(*args, text: bool = True):
    result = subprocess.run([sys.executable, "-m", "franz", "dump-log", *map(str, args)],
                            capture_output=True, text=text, timeout=60)
    return result.returncode, result.stdout, result.stderr


def write_log(tmp_path, records: list[tuple[bytes | None, bytes | None]], control_at: int | None = None):
    """A segment of one batch per (key, value) from offset 0; a COMMIT marker at `control_at`."""
    data = bytearray()
    for offset, (key, value) in enumerate(records):
        if offset == control_at:
            data += build_control_batch(ControlRecordType.COMMIT, producer_id=1, producer_epoch=0,
                                        coordinator_epoch=2, timestamp=TS, base_offset=offset)
        else:
            data += build_batch([SimpleRecord(value, key=key, timestamp=TS)], base_offset=offset)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    return path


def record_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("|")]


def contents(line: str) -> str:
    """What follows a record's metadata: ` key: ... payload: ...`."""
    return line[line.index("headerKeys: []") + len("headerKeys: []"):]


def test_offsets_decoder_prints_commits_and_group_metadata_as_kafkas_json(tmp_path):
    subscription = consumer_protocol.serialize_subscription(["t"], version=1, owned={"t": [0]})
    assignment = consumer_protocol.serialize_assignment({"t": [0, 1]}, version=0, user_data=b"\x01")

    def member(member_id: str, subscription: bytes) -> dict:
        return {"member_id": member_id, "group_instance_id": None, "client_id": "c", "client_host": "/127.0.0.1",
                "rebalance_timeout": 300000, "session_timeout": 45000, "subscription": subscription,
                "assignment": assignment}

    group = {"protocol_type": "consumer", "generation": 2, "protocol": "range", "leader": "m1",
             "current_state_timestamp": TS, "members": [member("m1", subscription), member("m2", b"\x00")]}
    connect = dict(group, protocol_type="connect", members=[member("w1", subscription)])
    legacy_key = struct.pack(">hh1sh1si", 0, 1, b"g", 1, b"t", 1)
    path = write_log(tmp_path, [
        (group_records.offset_commit_key("g", "t", 0),
         group_records.offset_commit_value(group_records.OffsetAndMetadata(5, 3, "m", 1000, None, TOPIC_ID))),
        (group_records.offset_commit_key("g", "t", 1),
         group_records.offset_commit_value(group_records.OffsetAndMetadata(6, -1, "", 1000, 2000))),
        (legacy_key, struct.pack(">hqh1sq", 0, 7, 1, b"x", 5)),
        (group_records.group_metadata_key("g"), group_records.group_metadata_value(group)),
        (group_records.group_metadata_key("w"), group_records.group_metadata_value(connect)),
        (group_records.consumer_group_key(group_records.CONSUMER_GROUP_METADATA, "cg"),
         group_records.consumer_group_value(group_records.CONSUMER_GROUP_METADATA, {"epoch": 4})),
        (group_records.offset_commit_key("g", "t", 0), None),
    ])
    code, out, err = dump("--offsets-decoder", path)
    assert code == 0, err
    lines = [contents(line) for line in record_lines(out)]
    assert lines[0] == (' key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: {"version":"4",'
                        '"data":{"offset":5,"leaderEpoch":3,"metadata":"m","commitTimestamp":1000,'
                        f'"topicId":"{TOPIC_ID_TEXT}"}}}}')
    assert lines[1] == (' key: {"type":"1","data":{"group":"g","topic":"t","partition":1}} payload: {"version":"1",'
                        '"data":{"offset":6,"metadata":"","commitTimestamp":1000,"expireTimestamp":2000}}')
    assert lines[2] == (' key: {"type":"0","data":{"group":"g","topic":"t","partition":1}} payload: {"version":"0",'
                        '"data":{"offset":7,"metadata":"x","commitTimestamp":5}}')
    members = ('"members":[{"memberId":"m1","groupInstanceId":null,"clientId":"c","clientHost":"/127.0.0.1",'
               '"rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":["t"],"userData":null,'
               '"ownedPartitions":[{"topic":"t","partitions":[0]}]},"assignment":{"assignedPartitions":[{"topic":"t",'
               '"partitions":[0,1]}],"userData":"AQ=="}},{"memberId":"m2","groupInstanceId":null,"clientId":"c",'
               '"clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":"AA==",'
               '"assignment":{"assignedPartitions":[{"topic":"t","partitions":[0,1]}],"userData":"AQ=="}}]')
    assert lines[3] == (' key: {"type":"2","data":{"group":"g"}} payload: {"version":"3","data":{"protocolType":'
                        f'"consumer","generation":2,"protocol":"range","leader":"m1","currentStateTimestamp":{TS},'
                        f'{members}}}}}')
    # Only a consumer group's members are read as ConsumerProtocol: a Connect group's stay base64.
    assert '"subscription":"AAEAAAABAAF0/////wAAAAEAAXQAAAABAAAAAA=="' in lines[4]
    assert lines[5] == ' key: {"type":"3","data":{"groupId":"cg"}} payload: {"version":"0","data":{"epoch":4}}'
    assert lines[6] == ' key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: <DELETE>'


def test_offsets_decoder_skips_records_it_cannot_read_as_kafka_does(tmp_path):
    legacy_key = struct.pack(">hh1sh1si", 0, 1, b"g", 1, b"t", 1)
    path = write_log(tmp_path, [
        (struct.pack(">hh1s", 9, 1, b"g"), b"\x00\x00"),  # type 9: 4.0's share group partition metadata
        (legacy_key, struct.pack(">hqh1sqq", 1, 7, 1, b"x", 5, 6)),  # LegacyOffsetCommitValue has version 0 only
        (group_records.offset_commit_key("g", "t", 0), b"\x00\x04\x00"),
        (b"\x00", None),
    ])
    code, out, err = dump("--offsets-decoder", path)
    assert code == 0, err
    lines = [contents(line) for line in record_lines(out)]
    assert lines[0] == " key: Unknown record type 9 at offset 0, skipping."
    assert lines[1] == " key: Error at offset 1, skipping. Found an unknown record version 1 for 0 type"
    assert lines[2].startswith(" key: Error at offset 2, skipping. Could not read record with version 4 from "
                               "value's buffer due to: ")
    assert lines[3] == " key: Error at offset 3, skipping. Could not read version from key's buffer."


def test_a_coordinator_record_without_a_key_stops_the_dump_as_kafkas_tool_stops(tmp_path):
    path = write_log(tmp_path, [(group_records.group_metadata_key("g"), None), (None, b"v"),
                                (group_records.group_metadata_key("h"), None)])
    code, out, err = dump("--offsets-decoder", path)
    assert code == 1
    assert "Failed to decode message at offset 1 using the specified decoder (message had a missing key)" in err
    assert len(record_lines(out)) == 1


def test_transaction_log_decoder_prints_transaction_log_values(tmp_path):
    ongoing = TransactionMetadata("tx", 42, 3, 60_000, TransactionState.ONGOING, {("b", 1), ("a", 0), ("a", 2)},
                                  1000, 2000, prev_producer_id=41)
    empty = TransactionMetadata("tx", 42, 3, 60_000)
    key = transaction_log.key_bytes("tx")
    path = write_log(tmp_path, [(key, transaction_log.value_bytes(ongoing)),
                                (key, transaction_log.value_bytes(empty, version=0)), (key, None)])
    code, out, err = dump("--transaction-log-decoder", path)
    assert code == 0, err
    lines = [contents(line) for line in record_lines(out)]
    assert lines[0] == (' key: {"type":"0","data":{"transactionalId":"tx"}} payload: {"version":"1","data":'
                        '{"producerId":42,"previousProducerId":41,"producerEpoch":3,"transactionTimeoutMs":60000,'
                        '"transactionStatus":1,"transactionPartitions":[{"topic":"a","partitionIds":[0,2]},'
                        '{"topic":"b","partitionIds":[1]}],"transactionLastUpdateTimestampMs":2000,'
                        '"transactionStartTimestampMs":1000}}')
    assert lines[1] == (' key: {"type":"0","data":{"transactionalId":"tx"}} payload: {"version":"0","data":'
                        '{"producerId":42,"producerEpoch":3,"transactionTimeoutMs":60000,"transactionStatus":0,'
                        '"transactionPartitions":null,"transactionLastUpdateTimestampMs":-1,'
                        '"transactionStartTimestampMs":-1}}')
    assert lines[2] == ' key: {"type":"0","data":{"transactionalId":"tx"}} payload: <DELETE>'


def test_share_group_state_decoder_prints_snapshots_and_updates(tmp_path):
    partition = share_records.SharePartitionKey("sg", TOPIC_ID, 0)
    batches = [{"first_offset": 10, "last_offset": 12, "delivery_state": 2, "delivery_count": 1}]
    snapshot = share_records.value(share_records.SHARE_SNAPSHOT, {
        "snapshot_epoch": 1, "state_epoch": 0, "leader_epoch": 2, "start_offset": 10,
        "delivery_complete_count": -1, "create_timestamp": 5, "write_timestamp": 6, "state_batches": batches})
    update = share_records.value(share_records.SHARE_UPDATE, {
        "snapshot_epoch": 1, "leader_epoch": 2, "start_offset": 11, "delivery_complete_count": 3,
        "state_batches": batches})
    path = write_log(tmp_path, [(share_records.key(share_records.SHARE_SNAPSHOT, partition), snapshot),
                                (share_records.key(share_records.SHARE_UPDATE, partition), update)])
    code, out, err = dump("--share-group-state-decoder", path)
    assert code == 0, err
    lines = [contents(line) for line in record_lines(out)]
    state_batches = '"stateBatches":[{"firstOffset":10,"lastOffset":12,"deliveryState":2,"deliveryCount":1}]'
    assert lines[0] == (f' key: {{"type":"0","data":{{"groupId":"sg","topicId":"{TOPIC_ID_TEXT}","partition":0}}}} '
                        'payload: {"version":"0","data":{"snapshotEpoch":1,"stateEpoch":0,"leaderEpoch":2,'
                        f'"startOffset":10,"createTimestamp":5,"writeTimestamp":6,{state_batches}}}}}')
    assert lines[1] == (f' key: {{"type":"1","data":{{"groupId":"sg","topicId":"{TOPIC_ID_TEXT}","partition":0}}}} '
                        'payload: {"version":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":11,'
                        f'"deliveryCompleteCount":3,{state_batches}}}}}')


def test_kafkas_decoder_classes_and_skip_record_metadata(tmp_path):
    path = write_log(tmp_path, [(struct.pack(">i", 7), struct.pack(">q", 2**40)), (None, b"\xff\xfeab"),
                                (b"k", b"v"), (None, None)], control_at=3)
    api = "org.apache.kafka.tools.api."
    code, out, err = dump("--key-decoder-class", api + "IntegerDecoder", "--value-decoder-class",
                          api + "LongDecoder", "--files", path, text=False)
    assert code == 1 and b"IntegerDecoder needs 4 bytes" not in err  # the record without a key has no key to read
    assert b"LongDecoder needs 8 bytes and the record has 4" in err  # ByteBuffer.getLong's underflow stops it
    assert record_lines(out.decode())[0].endswith("headerKeys: [] key: 7 payload: 1099511627776")
    code, out, _ = dump("--value-decoder-class", api + "DefaultDecoder", "--skip-record-metadata", path, text=False)
    # Only keys and payloads, a record's bytes as they are; a control record is an empty line.
    printed = [line for line in out.split(b"\n") if not line.startswith((b"Dumping", b"Log starting", b"baseOffset"))]
    assert code == 0 and printed == [b"| key: \x00\x00\x00\x07 payload: \x00\x00\x01\x00\x00\x00\x00\x00",
                                     b"| payload: \xff\xfeab", b"| key: k payload: v", b"", b""]
    code, _, err = dump("--key-decoder-class", "com.example.Missing", path)
    assert code == 1 and "Failed to load decoder class com.example.Missing" in err
    code, out, _ = dump("--files", path, "--key-decoder-class")  # no class: Kafka's StringDecoder, data printed
    assert code == 0 and record_lines(out)[2].endswith("key: k payload: v")


def test_decoders_franz_cannot_offer_are_refused_by_name(tmp_path):
    path = write_log(tmp_path, [(b"k", b"v")])
    for option in ("--cluster-metadata-decoder", "--remote-log-metadata-decoder"):
        code, _, err = dump(option, path)
        assert code == 1 and option in err


@pytest.mark.interop
def test_a_brokers_consumer_offsets_and_transaction_state_as_the_decoders_print_them(broker_factory, tmp_path):
    """librdkafka's classic group and transactional producer against a broker process; its own
    __consumer_offsets and __transaction_state segments, read by the decoders."""
    data_dir = tmp_path / "data"
    broker = broker_factory({"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1",
                             "group.initial.rebalance.delay.ms": "0"}, data_dir)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "tx-1"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("t", b"v", key=b"k")
    producer.commit_transaction(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g", "auto.offset.reset": "earliest",
                         "group.protocol": "classic", "enable.auto.commit": False})
    try:
        consumer.subscribe(["t"])
        deadline = time.monotonic() + 30
        message = None
        while message is None and time.monotonic() < deadline:
            polled = consumer.poll(0.5)
            message = polled if polled is not None and not polled.error() else None
        assert message is not None
        consumer.commit(message=message, asynchronous=False)
    finally:
        consumer.close()
    broker.stop()
    code, out, err = dump("--offsets-decoder", data_dir / "__consumer_offsets-0" / "00000000000000000000.log")
    assert code == 0, err
    assert '"members":[{"memberId":"rdkafka-' in out and '"subscription":{"topics":["t"],' in out
    assert ' key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: {"version":"4",' \
           '"data":{"offset":1,"leaderEpoch":0,' in out
    code, out, err = dump("--transaction-log-decoder", data_dir / "__transaction_state-0" / "00000000000000000000.log")
    assert code == 0, err
    assert '"transactionStatus":4,"transactionPartitions":[]' in out  # CompleteCommit
    assert '"transactionStatus":1,"transactionPartitions":[{"topic":"t","partitionIds":[0]}]' in out
