/*
 * UnifiedLog.append_as_leader's common case in one call: the C validator, the C
 * LocalLog.append, the producer state's map end offset, and the LogAppendInfo.
 *
 * franz/storage/unified_log.py is the reference: append_as_leader runs exactly these steps
 * in Python when this module is not built, and after any answer here but the last:
 *
 *   1. validator.assign_offsets_in_place: the topic keeps client batches as sent
 *      (CreateTime, compression.type producer or uncompressed), then
 *      _validator_fast.assign_offsets_non_compressed validates and stamps the batch at the
 *      log end offset. A decline there returns None: nothing was written, and the full
 *      validator runs (it names what is wrong, or does what the C one does not).
 *   2. A batch with a producer id returns that validator's tuple: its producer state is
 *      UnifiedLog._append's to consult (duplicates, sequences, transactions). So does a
 *      leader epoch newer than the epoch cache's latest: assigning it writes the
 *      leader-epoch-checkpoint, Python's to do (Partition.make_leader normally did already).
 *   3. _segment_fast.append_unless_roll_due appends it. If a roll is due (or anything else
 *      is off its common case), the validator's tuple comes back too, and Python rolls and
 *      appends the stamped batch.
 *   4. Otherwise ProducerStateManager.update_map_end_offset(last offset + 1) (its one
 *      attribute), then UnifiedLog.flush(last offset + 1) if flush.messages is reached, as
 *      after any append, and the LogAppendInfo of the append comes back.
 *
 * The two C modules are called through their Python-visible functions (a vectorcall of a
 * builtin: no Python frame), so each keeps its single definition and its own tests.
 *
 * Why it exists: on the produce path every Python frame costs two to three times what it
 * costs in a warm loop, because each batch's 16 KiB write evicts what the interpreter
 * touches. The frames this call replaces (the validator wrapper, the log end offset and
 * size properties, the LogAppendInfo, the local log call) cost ~4 us per 16 KiB append in
 * place, a third of what an append adds to the raw write (docs/TEAM_NOTES.md).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_fast_common.h"

static PyObject *assign_offsets_non_compressed;  /* franz.storage._validator_fast */
static PyObject *append_unless_roll_due;         /* franz.storage._segment_fast */
static PyTypeObject *log_append_info_type;       /* franz.storage.log_append_info.LogAppendInfo */
static PyObject *one, *s_flush;

/* What append_as_leader_common_case reads and writes, by class (SlotAttr: _fast_common.h). */
static SlotAttr log_local_log = SLOT_ATTR("UnifiedLog", "local_log");
static SlotAttr log_epoch_cache = SLOT_ATTR("UnifiedLog", "leader_epoch_cache");
static SlotAttr log_producer_state = SLOT_ATTR("UnifiedLog", "producer_state_manager");
static SlotAttr log_log_start_offset = SLOT_ATTR("UnifiedLog", "_log_start_offset");
static SlotAttr local_log_config = SLOT_ATTR("LocalLog", "config");
static SlotAttr local_log_recovery_point = SLOT_ATTR("LocalLog", "recovery_point");
static SlotAttr local_log_next_offset_metadata = SLOT_ATTR("LocalLog", "_next_offset_metadata");
static SlotAttr config_message_timestamp_type = SLOT_ATTR("LogConfig", "message_timestamp_type");
static SlotAttr config_compression_type = SLOT_ATTR("LogConfig", "compression_type");
static SlotAttr config_before_max_ms = SLOT_ATTR("LogConfig", "message_timestamp_before_max_ms");
static SlotAttr config_after_max_ms = SLOT_ATTR("LogConfig", "message_timestamp_after_max_ms");
static SlotAttr config_max_message_bytes = SLOT_ATTR("LogConfig", "max_message_bytes");
static SlotAttr config_compact = SLOT_ATTR("LogConfig", "compact");
static SlotAttr config_flush_messages = SLOT_ATTR("LogConfig", "flush_messages");
static SlotAttr records_buffer = SLOT_ATTR("MemoryRecords", "_buf");
static SlotAttr epoch_cache_entries = SLOT_ATTR("LeaderEpochFileCache", "_entries");
static SlotAttr producer_state_last_map_offset = SLOT_ATTR("ProducerStateManager", "_last_map_offset");
static SlotAttr *const all_attrs[] = {
    &log_local_log, &log_epoch_cache, &log_producer_state, &log_log_start_offset, &local_log_config,
    &local_log_recovery_point, &local_log_next_offset_metadata, &config_message_timestamp_type,
    &config_compression_type, &config_before_max_ms, &config_after_max_ms, &config_max_message_bytes,
    &config_compact, &config_flush_messages, &epoch_cache_entries, &producer_state_last_map_offset,
    &records_buffer, NULL,
};

#define LOG_APPEND_INFO_FIELDS 11

/* validator.assign_offsets_in_place's test of the topic: 1 when client batches are kept as
 * sent, 0 when not, -1 with an exception set. */
static int keeps_client_batches(PyObject *config) {
    PyObject *timestamp_type = get_attr(config, &config_message_timestamp_type);
    if (timestamp_type == NULL) return -1;
    int log_append_time = PyUnicode_Check(timestamp_type)
                          && PyUnicode_CompareWithASCIIString(timestamp_type, "LogAppendTime") == 0;
    Py_DECREF(timestamp_type);
    if (log_append_time) return 0;
    PyObject *compression = get_attr(config, &config_compression_type);
    if (compression == NULL) return -1;
    int kept = PyUnicode_Check(compression) && (PyUnicode_CompareWithASCIIString(compression, "producer") == 0
                                                || PyUnicode_CompareWithASCIIString(compression, "uncompressed") == 0);
    Py_DECREF(compression);
    return kept;
}

/* 1 when LeaderEpochFileCache.assign_if_newer(leader_epoch, ...) would change nothing (a
 * negative epoch, or one not above the latest entry's), 0 when it would, -1 on error. */
static int epoch_already_cached(PyObject *unified_log, PyObject *leader_epoch) {
    long epoch = PyLong_AsLong(leader_epoch);
    if (epoch == -1 && PyErr_Occurred()) return -1;
    if (epoch < 0) return 1;
    PyObject *cache = get_attr(unified_log, &log_epoch_cache);
    if (cache == NULL) return -1;
    PyObject *entries = get_attr(cache, &epoch_cache_entries);
    Py_DECREF(cache);
    if (entries == NULL) return -1;
    int cached = 0;
    if (PyList_Check(entries) && PyList_GET_SIZE(entries) > 0) {
        PyObject *latest = PyList_GET_ITEM(entries, PyList_GET_SIZE(entries) - 1);  /* an EpochEntry */
        if (PyTuple_Check(latest) && PyTuple_GET_SIZE(latest) >= 1) {
            long latest_epoch = PyLong_AsLong(PyTuple_GET_ITEM(latest, 0));
            if (latest_epoch == -1 && PyErr_Occurred()) cached = -1;
            else cached = epoch <= latest_epoch;
        }
    }
    Py_DECREF(entries);
    return cached;
}

/* UnifiedLog's test after an append: 1 when end_offset - LocalLog.recovery_point reaches
 * flush.messages, 0 when not, -1 with an exception set. */
static int flush_is_due(PyObject *local_log, PyObject *config, PyObject *end_offset) {
    PyObject *recovery_point = get_attr(local_log, &local_log_recovery_point);
    if (recovery_point == NULL) return -1;
    PyObject *flush_messages = get_attr(config, &config_flush_messages);
    if (flush_messages == NULL) {
        Py_DECREF(recovery_point);
        return -1;
    }
    long long end = as_i64(end_offset), point = as_i64(recovery_point), messages = as_i64(flush_messages);
    Py_DECREF(recovery_point);
    Py_DECREF(flush_messages);
    if (PyErr_Occurred()) return -1;
    return end - point >= messages;
}

/* append_as_leader_common_case(unified_log, records, leader_epoch, now_ms)
 *   -> LogAppendInfo (appended), the validator's tuple (stamped, not appended), or None
 *
 * See the header for each answer. `records` is the request's MemoryRecords, one batch as a
 * v2 produce sends it. The caller holds the partition lock. */
static PyObject *append_as_leader_common_case(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "append_as_leader_common_case takes 4 arguments");
        return NULL;
    }
    PyObject *unified_log = args[0], *leader_epoch = args[2], *now = args[3];
    PyObject *buffer = NULL, *local_log = NULL, *config = NULL, *metadata = NULL, *stamped = NULL, *end_offset = NULL;
    PyObject *result = NULL;
    PyObject *validator_args[9] = {NULL};
    int kept;

    if ((buffer = get_attr(args[1], &records_buffer)) == NULL
            || (local_log = get_attr(unified_log, &log_local_log)) == NULL
            || (config = get_attr(local_log, &local_log_config)) == NULL
            || (kept = keeps_client_batches(config)) < 0)
        goto out;
    if (!kept) {
        result = Py_NewRef(Py_None);
        goto out;
    }
    if ((metadata = get_attr(local_log, &local_log_next_offset_metadata)) == NULL) goto out;
    if (!PyTuple_Check(metadata) || PyTuple_GET_SIZE(metadata) < 1) {
        PyErr_SetString(PyExc_TypeError, "LocalLog._next_offset_metadata must be a LogOffsetMetadata");
        goto out;
    }
    PyObject *next_offset = PyTuple_GET_ITEM(metadata, 0);  /* borrowed from metadata */

    /* 1. Validate and stamp. */
    validator_args[0] = Py_NewRef(buffer);
    validator_args[1] = Py_NewRef(next_offset);
    validator_args[2] = Py_NewRef(leader_epoch);
    validator_args[3] = Py_NewRef(now);
    if ((validator_args[4] = get_attr(config, &config_before_max_ms)) == NULL
            || (validator_args[5] = get_attr(config, &config_after_max_ms)) == NULL
            || (validator_args[6] = get_attr(config, &config_max_message_bytes)) == NULL
            || (validator_args[7] = get_attr(config, &config_compact)) == NULL)
        goto out;
    validator_args[8] = Py_NewRef(Py_False);  /* no header for a batch without a producer id */
    stamped = PyObject_Vectorcall(assign_offsets_non_compressed, validator_args, 9, NULL);
    if (stamped == NULL) goto out;
    if (stamped == Py_None || !PyTuple_Check(stamped) || PyTuple_GET_SIZE(stamped) != 5
            || PyTuple_GET_ITEM(stamped, 0) != Py_None) {
        result = Py_NewRef(stamped);  /* declined (None), or a producer's batch: Python goes on */
        goto out;
    }

    int cached = epoch_already_cached(unified_log, leader_epoch);
    if (cached < 0) goto out;
    if (!cached) {
        result = Py_NewRef(stamped);
        goto out;
    }

    /* 3. Append, unless a roll is due. */
    PyObject *last_offset = PyTuple_GET_ITEM(stamped, 1), *max_timestamp = PyTuple_GET_ITEM(stamped, 2),
             *shallow_offset = PyTuple_GET_ITEM(stamped, 3), *record_count = PyTuple_GET_ITEM(stamped, 4);
    PyObject *segment_args[6] = {local_log, buffer, last_offset, max_timestamp, shallow_offset, now};
    PyObject *appended = PyObject_Vectorcall(append_unless_roll_due, segment_args, 6, NULL);
    if (appended == NULL) goto out;
    Py_DECREF(appended);  /* a bool: the identity test below stays valid */
    if (appended != Py_True) {
        result = Py_NewRef(stamped);
        goto out;
    }

    /* 4. The producer state's map end offset, flush.messages, then LogAppendInfo(first_offset,
     *    last_offset, last_leader_epoch, max_timestamp, shallow_offset_of_max_timestamp,
     *    log_append_time_ms, log_start_offset, num_messages, valid_bytes, duplicate,
     *    record_validation_stats: None, as the uncompressed common case has none). */
    PyObject *producer_state = get_attr(unified_log, &log_producer_state);
    if (producer_state == NULL) goto out;
    end_offset = PyNumber_Add(last_offset, one);
    int set_failed = end_offset == NULL || set_attr(producer_state, &producer_state_last_map_offset, end_offset) < 0;
    Py_DECREF(producer_state);
    if (set_failed) goto out;
    int flush_due = flush_is_due(local_log, config, end_offset);
    if (flush_due < 0) goto out;
    if (flush_due) {
        PyObject *flushed = PyObject_CallMethodOneArg(unified_log, s_flush, end_offset);
        if (flushed == NULL) goto out;
        Py_DECREF(flushed);
    }
    Py_ssize_t size = PyObject_Length(buffer);
    if (size < 0) goto out;
    PyObject *info = log_append_info_type->tp_alloc(log_append_info_type, LOG_APPEND_INFO_FIELDS);
    if (info == NULL) goto out;
    PyObject *fields[LOG_APPEND_INFO_FIELDS] = {
        Py_NewRef(next_offset), Py_NewRef(last_offset), Py_NewRef(leader_epoch), Py_NewRef(max_timestamp),
        Py_NewRef(shallow_offset), PyLong_FromLong(-1), get_attr(unified_log, &log_log_start_offset),
        Py_NewRef(record_count), PyLong_FromSsize_t(size), Py_NewRef(Py_False), Py_NewRef(Py_None),
    };
    int failed = 0;
    for (int i = 0; i < LOG_APPEND_INFO_FIELDS; i++) {
        if (fields[i] == NULL) failed = 1;
        PyTuple_SET_ITEM(info, i, fields[i]);  /* steals; a NULL slot is fine for the DECREF below */
    }
    if (failed) {
        Py_DECREF(info);
        goto out;
    }
    result = info;

out:
    for (int i = 0; i < 9; i++) Py_XDECREF(validator_args[i]);
    Py_XDECREF(stamped);
    Py_XDECREF(metadata);
    Py_XDECREF(config);
    Py_XDECREF(local_log);
    Py_XDECREF(buffer);
    Py_XDECREF(end_offset);
    return result;
}

SLOT_ATTRIBUTES_FUNCTION(all_attrs)

static PyMethodDef methods[] = {
    SLOT_ATTRIBUTES_METHOD,
    {"append_as_leader_common_case", (PyCFunction)(void (*)(void))append_as_leader_common_case, METH_FASTCALL,
     "UnifiedLog.append_as_leader's common case: a LogAppendInfo, the validator's tuple, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "_unified_log_fast", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__unified_log_fast(void) {
    if (slot_attrs_init(all_attrs)) return NULL;
    if ((one = PyLong_FromLong(1)) == NULL || intern(&s_flush, "flush")) return NULL;
    /* Either C module missing makes this one fail to import: the Python steps then run. */
    if ((assign_offsets_non_compressed = attribute_of("franz.storage._validator_fast",
                                                      "assign_offsets_non_compressed")) == NULL
            || (append_unless_roll_due = attribute_of("franz.storage._segment_fast", "append_unless_roll_due")) == NULL
            || (log_append_info_type = tuple_type_of("franz.storage.log_append_info", "LogAppendInfo")) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
