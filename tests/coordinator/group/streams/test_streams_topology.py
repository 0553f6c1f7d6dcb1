"""StreamsTopology: the topology a streams group keeps, and how a heartbeat's Topology becomes one.
Cases ported from Kafka's StreamsTopologyTest (4.3) unless noted."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.streams_topology import (
    CopartitionGroup,
    StreamsTopology,
    Subtopology,
    TopicInfo,
)

SUBTOPOLOGY_ID_1 = "subtopology-1"
SUBTOPOLOGY_ID_2 = "subtopology-2"
SOURCE_TOPIC_1, SOURCE_TOPIC_2, SOURCE_TOPIC_3 = "source-topic-1", "source-topic-2", "source-topic-3"
REPARTITION_TOPIC_1, REPARTITION_TOPIC_2, REPARTITION_TOPIC_3 = (
    "repartition-topic-1", "repartition-topic-2", "repartition-topic-3")
CHANGELOG_TOPIC_1, CHANGELOG_TOPIC_2, CHANGELOG_TOPIC_3 = "changelog-1", "changelog-2", "changelog-3"


def _subtopology_1() -> Subtopology:
    return Subtopology(
        subtopology_id=SUBTOPOLOGY_ID_1,
        source_topics=(SOURCE_TOPIC_1, SOURCE_TOPIC_2, REPARTITION_TOPIC_1, REPARTITION_TOPIC_2),
        repartition_source_topics=(TopicInfo(REPARTITION_TOPIC_1), TopicInfo(REPARTITION_TOPIC_2)),
        repartition_sink_topics=(REPARTITION_TOPIC_3,),
        state_changelog_topics=(TopicInfo(CHANGELOG_TOPIC_1), TopicInfo(CHANGELOG_TOPIC_2)),
        copartition_groups=(CopartitionGroup(source_topics=(0,), repartition_source_topics=(0,)),
                            CopartitionGroup(source_topics=(1,), repartition_source_topics=(1,))),
    )


def _subtopology_2() -> Subtopology:
    return Subtopology(
        subtopology_id=SUBTOPOLOGY_ID_2,
        source_topics=(SOURCE_TOPIC_3, REPARTITION_TOPIC_3),
        repartition_source_topics=(TopicInfo(REPARTITION_TOPIC_3),),
        state_changelog_topics=(TopicInfo(CHANGELOG_TOPIC_3),),
    )


def _request_topic_info(name: str, partitions: int = 0, replication_factor: int = 0, configs=()) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": replication_factor,
            "topic_configs": [{"key": key, "value": value} for key, value in configs]}


def _request_subtopology(subtopology_id: str, *, source_topics=(), repartition_source_topics=(),
                         repartition_sink_topics=(), state_changelog_topics=(), copartition_groups=()) -> dict:
    return {
        "subtopology_id": subtopology_id,
        "source_topics": list(source_topics),
        "source_topic_regex": [],
        "state_changelog_topics": list(state_changelog_topics),
        "repartition_sink_topics": list(repartition_sink_topics),
        "repartition_source_topics": list(repartition_source_topics),
        "copartition_groups": list(copartition_groups),
    }


def _request_subtopology_1() -> dict:
    return _request_subtopology(
        SUBTOPOLOGY_ID_1,
        source_topics=(SOURCE_TOPIC_1, SOURCE_TOPIC_2, REPARTITION_TOPIC_1, REPARTITION_TOPIC_2),
        repartition_source_topics=(_request_topic_info(REPARTITION_TOPIC_1), _request_topic_info(REPARTITION_TOPIC_2)),
        repartition_sink_topics=(REPARTITION_TOPIC_3,),
        state_changelog_topics=(_request_topic_info(CHANGELOG_TOPIC_1), _request_topic_info(CHANGELOG_TOPIC_2)),
        copartition_groups=(
            {"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": [0]},
            {"source_topics": [1], "source_topic_regex": [], "repartition_source_topics": [1]},
        ),
    )


def _request_subtopology_2() -> dict:
    return _request_subtopology(
        SUBTOPOLOGY_ID_2,
        source_topics=(SOURCE_TOPIC_3, REPARTITION_TOPIC_3),
        repartition_source_topics=(_request_topic_info(REPARTITION_TOPIC_3),),
        state_changelog_topics=(_request_topic_info(CHANGELOG_TOPIC_3),),
    )


def test_subtopologies_map_should_not_be_null():
    with pytest.raises(TypeError, match="^Subtopologies cannot be null.$"):
        StreamsTopology(1, None)  # type: ignore[arg-type]


def test_topology_epoch_should_not_be_negative():
    with pytest.raises(ValueError, match="^Topology epoch must be non-negative.$"):
        StreamsTopology(-1, {SUBTOPOLOGY_ID_1: _subtopology_1()})


def test_subtopologies_are_the_topologys_own_copy():
    """Kafka's subtopologiesMapShouldBeImmutable: changing the map given does not change the topology."""
    subtopologies = {SUBTOPOLOGY_ID_1: _subtopology_1()}
    topology = StreamsTopology(1, subtopologies)
    subtopologies[SUBTOPOLOGY_ID_2] = _subtopology_2()
    assert list(topology.subtopologies) == [SUBTOPOLOGY_ID_1]


def test_required_topics_should_be_correct():
    topology = StreamsTopology(1, {SUBTOPOLOGY_ID_1: _subtopology_1(), SUBTOPOLOGY_ID_2: _subtopology_2()})
    assert topology.required_topics() == {
        SOURCE_TOPIC_1, SOURCE_TOPIC_2, SOURCE_TOPIC_3,
        REPARTITION_TOPIC_1, REPARTITION_TOPIC_2, REPARTITION_TOPIC_3,
        CHANGELOG_TOPIC_1, CHANGELOG_TOPIC_2, CHANGELOG_TOPIC_3,
    }


def test_required_topics_leave_out_source_topic_regexes_and_sink_only_topics():
    """franz: a regex is no topic name, and a repartition sink topic is required as some subtopology's
    repartition source topic, not for being written to."""
    subtopology = Subtopology("0", source_topics=("in",), source_topic_regex=("in-.*",),
                              repartition_sink_topics=("only-written",))
    assert StreamsTopology(0, {"0": subtopology}).required_topics() == {"in"}


def test_from_heartbeat_request_should_create_correct_topology():
    request_topology = {"epoch": 1, "subtopologies": [_request_subtopology_1(), _request_subtopology_2()]}

    topology = StreamsTopology.from_heartbeat_request(request_topology)

    assert topology.topology_epoch == 1
    assert topology.subtopologies == {SUBTOPOLOGY_ID_1: _subtopology_1(), SUBTOPOLOGY_ID_2: _subtopology_2()}


def test_from_heartbeat_request_refuses_two_subtopologies_of_one_id():
    """franz: Kafka collects the request's subtopologies with Collectors.toMap, which throws on a
    key seen twice (the heartbeat is then answered UNKNOWN_SERVER_ERROR); keeping the last one
    would take a topology Kafka refuses."""
    request_topology = {"epoch": 1, "subtopologies": [_request_subtopology_1(), _request_subtopology_2(),
                                                      _request_subtopology_1()]}
    with pytest.raises(ValueError, match=f"^Duplicate key {SUBTOPOLOGY_ID_1}$"):
        StreamsTopology.from_heartbeat_request(request_topology)


def test_from_heartbeat_request_keeps_topic_infos_and_regexes():
    """franz: every field of TopicInfo and the regexes come through."""
    subtopology = _request_subtopology(
        "0", source_topics=("in",),
        repartition_source_topics=(_request_topic_info("rep", 4, 3, [("cleanup.policy", "delete")]),),
        state_changelog_topics=(_request_topic_info("log", 0, 2, [("cleanup.policy", "compact"),
                                                                  ("min.insync.replicas", "2")]),))
    subtopology["source_topic_regex"] = ["in-.*"]
    subtopology["copartition_groups"] = [{"source_topics": [0], "source_topic_regex": [0],
                                          "repartition_source_topics": [0]}]

    topology = StreamsTopology.from_heartbeat_request({"epoch": 7, "subtopologies": [subtopology]})

    assert topology.topology_epoch == 7
    assert topology.subtopologies["0"] == Subtopology(
        subtopology_id="0",
        source_topics=("in",),
        source_topic_regex=("in-.*",),
        repartition_source_topics=(TopicInfo("rep", 4, 3, {"cleanup.policy": "delete"}),),
        state_changelog_topics=(TopicInfo("log", 0, 2, {"cleanup.policy": "compact", "min.insync.replicas": "2"}),),
        copartition_groups=(CopartitionGroup((0,), (0,), (0,)),),
    )


def test_source_topic_map_should_be_computed_correctly():
    topology = StreamsTopology(1, {SUBTOPOLOGY_ID_1: _subtopology_1(), SUBTOPOLOGY_ID_2: _subtopology_2()})

    assert topology.source_topic_map == {
        SOURCE_TOPIC_1: _subtopology_1(),
        SOURCE_TOPIC_2: _subtopology_1(),
        REPARTITION_TOPIC_1: _subtopology_1(),
        REPARTITION_TOPIC_2: _subtopology_1(),
        SOURCE_TOPIC_3: _subtopology_2(),
        REPARTITION_TOPIC_3: _subtopology_2(),
    }


def test_empty_topology():
    """Kafka's asStreamsGroupDescribeTopologyWithEmptySubtopologies, without the describe shape."""
    topology = StreamsTopology(0, {})
    assert topology.required_topics() == set()
    assert topology.source_topic_map == {}


def test_as_streams_group_describe_topology_should_return_correct_structure():
    topology = StreamsTopology(1, {SUBTOPOLOGY_ID_2: _subtopology_2(), SUBTOPOLOGY_ID_1: _subtopology_1()})

    described = topology.as_streams_group_describe_topology()

    assert described["epoch"] == 1
    first, second = described["subtopologies"]
    assert first["subtopology_id"] == SUBTOPOLOGY_ID_1
    assert first["source_topics"] == [REPARTITION_TOPIC_1, REPARTITION_TOPIC_2, SOURCE_TOPIC_1, SOURCE_TOPIC_2]
    assert first["repartition_sink_topics"] == [REPARTITION_TOPIC_3]
    assert [topic["name"] for topic in first["repartition_source_topics"]] == [REPARTITION_TOPIC_1, REPARTITION_TOPIC_2]
    assert [topic["name"] for topic in first["state_changelog_topics"]] == [CHANGELOG_TOPIC_1, CHANGELOG_TOPIC_2]
    assert second["subtopology_id"] == SUBTOPOLOGY_ID_2
    assert second["source_topics"] == [REPARTITION_TOPIC_3, SOURCE_TOPIC_3]
    assert second["repartition_sink_topics"] == []


def test_as_streams_group_describe_topic_info_should_convert_correctly():
    subtopology = Subtopology("0", source_topics=("in",), state_changelog_topics=(
        TopicInfo("z-changelog"), TopicInfo("a-changelog", 0, 3, {"cleanup.policy": "compact"})))

    described = StreamsTopology(1, {"0": subtopology}).as_streams_group_describe_topology()

    assert described["subtopologies"][0]["state_changelog_topics"] == [
        {"name": "a-changelog", "partitions": 0, "replication_factor": 3,
         "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]},
        {"name": "z-changelog", "partitions": 0, "replication_factor": 0, "topic_configs": []},
    ]


def test_as_streams_group_describe_topology_with_empty_subtopologies():
    assert StreamsTopology(0, {}).as_streams_group_describe_topology() == {"epoch": 0, "subtopologies": []}
