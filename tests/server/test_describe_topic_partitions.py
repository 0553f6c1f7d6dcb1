"""DescribeTopicPartitions against a running broker: pages of partitions in name order, the
cursor that continues them, and the errors Kafka gives."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.auth_helper import authorized_operations
from tests.support.raw_client import RawClient, create_topic

DESCRIBE_TOPIC_PARTITIONS = 75


def _page(client: RawClient, names: list[str], limit: int, cursor: tuple[str, int] | None = None) -> dict:
    return client.request(DESCRIBE_TOPIC_PARTITIONS, 0, {
        "topics": [{"name": name} for name in names], "response_partition_limit": limit,
        "cursor": None if cursor is None else {"topic_name": cursor[0], "partition_index": cursor[1]}})


def _summary(answer: dict) -> tuple[list, tuple | None]:
    cursor = answer["next_cursor"]
    return ([(t["name"], t["error_code"], [p["partition_index"] for p in t["partitions"]]) for t in answer["topics"]],
            None if cursor is None else (cursor["topic_name"], cursor["partition_index"]))


def test_every_topic_is_described_page_by_page_in_name_order(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "b-three", 3)
        create_topic(client, "a-two", 2)
        create_topic(client, "c-one", 1)
        pages, cursor = [], None
        for _ in range(10):  # bounded: 6 partitions, 2 a page
            topics, cursor = _summary(_page(client, [], 2, cursor))
            pages.append(topics)
            if cursor is None:
                break
        assert pages == [[("a-two", 0, [0, 1])], [("b-three", 0, [0, 1])], [("b-three", 0, [2]), ("c-one", 0, [0])]]
        # The page after a topic's last partition starts with the next topic, from partition 0.
        assert _summary(_page(client, [], 2)) == ([("a-two", 0, [0, 1])], ("b-three", 0))
        described = _page(client, ["c-one"], 10)["topics"][0]
        partition = described["partitions"][0]
        assert (partition["leader_id"], partition["replica_nodes"], partition["isr_nodes"]) == (1, [1], [1])
        assert described["topic_authorized_operations"] == authorized_operations("topic")


def test_named_topics_that_do_not_exist_are_named_and_bad_cursors_refused(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "here", 2)
        assert _summary(_page(client, ["here", "nowhere", "bad name!"], 100)) == (
            [("bad name!", Errors.INVALID_TOPIC_EXCEPTION, []), ("here", 0, [0, 1]),
             ("nowhere", Errors.UNKNOWN_TOPIC_OR_PARTITION, [])], None)
        assert _summary(_page(client, ["here"], 100, ("here", 1))) == ([("here", 0, [1])], None)
        refused = _page(client, ["here"], 100, ("elsewhere", 0))["topics"]
        assert [(t["name"], t["error_code"]) for t in refused] == [("here", Errors.INVALID_REQUEST)]
        refused = _page(client, ["here"], 100, ("here", -1))["topics"]
        assert [(t["name"], t["error_code"]) for t in refused] == [("here", Errors.INVALID_REQUEST)]
