"""Behaviours of Kafka's LogFileUtils and LocalLog directory naming, as franz's own tests."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage import files


def test_names_are_the_base_offset_padded_to_twenty_digits(tmp_path):
    assert files.log_file(tmp_path, 0) == tmp_path / "00000000000000000000.log"
    assert files.offset_index_file(tmp_path, 123).name == "00000000000000000123.index"
    assert files.time_index_file(tmp_path, 2**63 - 1).name == "09223372036854775807.timeindex"
    assert files.transaction_index_file(tmp_path, 5).name == "00000000000000000005.txnindex"
    assert files.producer_snapshot_file(tmp_path, 42).name == "00000000000000000042.snapshot"


def test_transient_suffixes_are_appended_to_the_full_name(tmp_path):
    assert files.log_file(tmp_path, 7, files.CLEANED_FILE_SUFFIX).name == "00000000000000000007.log.cleaned"
    assert files.offset_index_file(tmp_path, 7, files.SWAP_FILE_SUFFIX).name == "00000000000000000007.index.swap"
    assert files.time_index_file(tmp_path, 7, files.DELETED_FILE_SUFFIX).name == \
        "00000000000000000007.timeindex.deleted"
    assert files.transaction_index_file(tmp_path, 5, ".swap").name == "00000000000000000005.txnindex.swap"
    assert files.producer_snapshot_file(tmp_path, 5, ".deleted").name == "00000000000000000005.snapshot.deleted"


def test_offsets_outside_a_java_long_cannot_name_a_file(tmp_path):
    with pytest.raises(AssertionError):
        files.log_file(tmp_path, -1)
    with pytest.raises(AssertionError):
        files.log_file(tmp_path, 2**63)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**63 - 1), min_size=2, max_size=20))
def test_lexical_order_is_offset_order(offsets):
    names = [files.filename_prefix_from_offset(o) for o in offsets]
    assert sorted(names) == [files.filename_prefix_from_offset(o) for o in sorted(offsets)]
    assert all(len(name) == 20 for name in names)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**63 - 1), st.sampled_from(["", ".deleted", ".cleaned", ".swap"]))
def test_offset_is_read_back_from_every_kind_of_name(offset, suffix):
    for make in (files.log_file, files.offset_index_file, files.time_index_file,
                 files.transaction_index_file, files.producer_snapshot_file):
        assert files.offset_from_file(make(Path("d"), offset, suffix)) == offset


@pytest.mark.parametrize("name", ["log", "abc.log", " 1.log", "1_0.log", "\u0661.log", ".log",
                                  "99999999999999999999.log"])
def test_a_name_that_is_not_offset_dot_suffix_is_refused(name):
    with pytest.raises(ValueError):
        files.offset_from_file_name(name)


def test_suffix_predicates():
    assert files.is_log_file(Path("00000000000000000000.log"))
    assert not files.is_log_file(Path("00000000000000000000.log.deleted"))
    for name in ("0.index", "0.timeindex", "0.txnindex"):
        assert files.is_index_file(Path(name))
    assert not files.is_index_file(Path("00000000000000000000.log"))
    assert not files.is_index_file(Path("00000000000000000000.index.swap"))
    assert files.is_offset_index_file("0.index") and not files.is_offset_index_file("0.timeindex")
    assert files.is_time_index_file("0.timeindex") and files.is_txn_index_file("0.txnindex")
    assert files.is_snapshot_file("00000000000000000003.snapshot")
    assert files.has_suffix("0.log.swap", files.SWAP_FILE_SUFFIX)
    assert files.strip_suffix(Path("a/00000000000000000000.log.swap"), ".swap") == Path("a/00000000000000000000.log")


def test_partition_dir_names_round_trip_including_dashes_in_topics():
    assert files.partition_dir_name("my-topic", 12) == "my-topic-12"
    assert files.parse_topic_partition_name("my-topic-12") == ("my-topic", 12)
    assert files.parse_topic_partition_name("__consumer_offsets-49") == ("__consumer_offsets", 49)


@pytest.mark.parametrize("make, is_kind", [(files.delete_dir_name, files.is_delete_dir),
                                           (files.future_dir_name, files.is_future_dir),
                                           (files.stray_dir_name, files.is_stray_dir)])
def test_renamed_partition_dirs_are_recognised_and_parsed(make, is_kind):
    name = make("my-topic", 3)
    assert is_kind(name)
    assert not is_kind("my-topic-3")
    assert files.parse_topic_partition_name(name) == ("my-topic", 3)


def test_delete_dir_name_is_capped_at_255_chars_by_cutting_the_topic():
    topic = "t" * 249  # Kafka's topic length limit
    name = files.delete_dir_name(topic, 1234)
    assert len(name) == 255 and name.endswith("-delete")
    parsed_topic, partition = files.parse_topic_partition_name(name)
    assert partition == 1234
    assert parsed_topic == topic[: 255 - len("-1234.") - 32 - len("-delete")]
    assert len(files.stray_dir_name(topic, 1)) == 255
    assert files.delete_dir_name("short", 0).startswith("short-0.")


@pytest.mark.parametrize("bad", ["", "topic", "-1", "topic-", "topic-x", "topic-1.abc-delete-x-", "topic-2147483648",
                                 "topic-1-delete", "topic-1.x y-delete", "topic-\u0661"])
def test_a_directory_that_is_not_a_partition_is_refused(bad):
    with pytest.raises(ValueError, match="topic-partition"):
        files.parse_topic_partition_name(bad)
