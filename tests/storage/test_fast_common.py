"""franz/storage/_fast_common.h: the C append path reads and writes its attributes at their
__slots__ offsets (SlotAttr).

An attribute that lost its slot would still be read correctly, through PyObject_GetAttr,
only slower: these tests are what notice. The behaviour of each C module on its objects
(subclasses and properties included) is tested beside that module."""

from __future__ import annotations

import inspect
import types

import pytest

from franz.records import MemoryRecords
from franz.records.file_records import FileRecords
from franz.storage.epoch_cache import LeaderEpochFileCache
from franz.storage.index import OffsetIndex, TimeIndex
from franz.storage.local_log import LocalLog
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import ProducerStateManager
from franz.storage.segment import LogSegment
from franz.storage.segments import LogSegments
from franz.storage.unified_log import UnifiedLog

CLASSES = {cls.__name__: cls for cls in (FileRecords, LeaderEpochFileCache, OffsetIndex, TimeIndex, LocalLog,
                                          LogConfig, MemoryRecords, ProducerStateManager, LogSegment, LogSegments,
                                          UnifiedLog)}


def _modules():
    try:
        from franz.storage import _segment_fast, _unified_log_fast
    except ImportError:  # test_segment_fast and test_unified_log_fast say it is not built
        pytest.skip("the C append modules are not built")
    return _segment_fast, _unified_log_fast


@pytest.mark.parametrize("module_name", ["_segment_fast", "_unified_log_fast"])
def test_every_attribute_the_c_path_touches_is_a_slot_of_its_class(module_name):
    module = dict(zip(("_segment_fast", "_unified_log_fast"), _modules()))[module_name]
    listed = module.slot_attributes()
    assert len(listed) >= 10
    not_slots = [(class_name, name) for class_name, name in listed
                 if type(inspect.getattr_static(CLASSES[class_name], name, None)) is not types.MemberDescriptorType]
    assert not_slots == [], "declare these in the class's __slots__ (or read them another way)"
