/*
 * LocalLog.append for the active segment, in C: UnifiedLog's roll check, LogSegment.append,
 * then LocalLog's log end offset.
 *
 * franz/storage/segment.py and local_log.py are the reference and keep the only copy of the
 * state: this module reads and writes the attributes of the Python objects themselves (the
 * LocalLog, its active LogSegment, that segment's FileRecords, OffsetIndex and TimeIndex),
 * exactly where their Python methods do:
 *
 *   - LogSegment.should_roll(RollParams(...)) must be False: the segment has room for the
 *     batch, its time to roll has not come, neither index is full, and the batch's last
 *     offset fits an int32 relative to the base offset;
 *   - then LogSegment.append: FileRecords.append (pwrite, the GIL released, a short write
 *     resumed; see reserve_ahead_length for the one thing it adds), the segment's max
 *     timestamp so far, and, once more than
 *     index.interval.bytes went in since the last entry, OffsetIndex.append and
 *     TimeIndex.maybe_append, each entry's bytes written before its count moves (readers
 *     of the index take no lock);
 *   - then LocalLog.update_log_end_offset: a new LogOffsetMetadata at the segment's size.
 *
 * Every check runs before anything is written. Whatever is not the common case returns
 * False with nothing done: a roll is due, a first timestamp not yet loaded, an index entry
 * the Python would refuse (a full index, an offset not above the last, an overflow), an
 * index lock another thread holds, a closed index, a recovery point past the new end. The
 * caller then rolls if it must and runs the Python append, which raises the error or does
 * the rest. So this module never decides an error or a roll, and
 * tests/storage/test_segment_fast.py checks that both paths leave identical files and
 * objects.
 *
 * Why it exists: on the produce path those Python methods cost as much as the rest of an
 * append, validation included: ~17k instructions and six frames per batch, each frame
 * slower than its instructions because every batch's 16 KiB write evicts the memory they
 * touch (bench/storage_bench.py; docs/TEAM_NOTES.md, "append instruction budget").
 */
#define _GNU_SOURCE  /* fallocate */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "_fast_common.h"

#define INT32_MAX_VALUE 0x7FFFFFFFLL
#define OFFSET_ENTRY_SIZE 8  /* relative offset int32, position int32 */
#define TIME_ENTRY_SIZE 12   /* timestamp int64, relative offset int32 */

static PyTypeObject *timestamp_offset_type;   /* franz.storage.index.TimestampOffset (a tuple subclass) */
static PyTypeObject *log_offset_metadata_type;  /* franz.storage.segment.LogOffsetMetadata (a tuple subclass) */
static PyObject *unknown_timestamp_offset;    /* franz.storage.segment.UNKNOWN_TIMESTAMP_OFFSET */

/* What each function below reads and writes, by class (see SlotAttr in _fast_common.h). */
static SlotAttr segment_log = SLOT_ATTR("LogSegment", "log");
static SlotAttr segment_base_offset = SLOT_ATTR("LogSegment", "base_offset");
static SlotAttr segment_rolling_based_timestamp = SLOT_ATTR("LogSegment", "rolling_based_timestamp");
static SlotAttr segment_created = SLOT_ATTR("LogSegment", "created");
static SlotAttr segment_roll_jitter_ms = SLOT_ATTR("LogSegment", "roll_jitter_ms");
static SlotAttr segment_offset_index = SLOT_ATTR("LogSegment", "_offset_index");
static SlotAttr segment_time_index = SLOT_ATTR("LogSegment", "_time_index");
static SlotAttr segment_so_far = SLOT_ATTR("LogSegment", "_max_timestamp_and_offset_so_far");
static SlotAttr segment_bytes_since = SLOT_ATTR("LogSegment", "bytes_since_last_index_entry");
static SlotAttr segment_index_interval_bytes = SLOT_ATTR("LogSegment", "index_interval_bytes");
static SlotAttr records_is_slice = SLOT_ATTR("FileRecords", "_is_slice");
static SlotAttr records_fd = SLOT_ATTR("FileRecords", "fd");
static SlotAttr records_start = SLOT_ATTR("FileRecords", "_start");
static SlotAttr records_size = SLOT_ATTR("FileRecords", "_size");
static SlotAttr records_reserved_end = SLOT_ATTR("FileRecords", "_reserved_end");
static SlotAttr offset_index_last_offset = SLOT_ATTR("OffsetIndex", "_last_offset");
static SlotAttr time_index_last_entry = SLOT_ATTR("TimeIndex", "_last_entry");
static SlotAttr local_log_segments = SLOT_ATTR("LocalLog", "segments");
static SlotAttr local_log_config = SLOT_ATTR("LocalLog", "config");
static SlotAttr local_log_recovery_point = SLOT_ATTR("LocalLog", "recovery_point");
static SlotAttr local_log_next_offset_metadata = SLOT_ATTR("LocalLog", "_next_offset_metadata");
static SlotAttr segments_last = SLOT_ATTR("LogSegments", "_last");
static SlotAttr config_segment_bytes = SLOT_ATTR("LogConfig", "segment_bytes");
static SlotAttr config_segment_ms = SLOT_ATTR("LogConfig", "segment_ms");

/* An index's attributes, one set per index class. */
typedef struct {
    SlotAttr base_offset, entries, max_entries, lock, mmap;
} IndexAttrs;
static IndexAttrs offset_index_attrs = {
    SLOT_ATTR("OffsetIndex", "base_offset"), SLOT_ATTR("OffsetIndex", "entries"),
    SLOT_ATTR("OffsetIndex", "max_entries"), SLOT_ATTR("OffsetIndex", "lock"), SLOT_ATTR("OffsetIndex", "_mmap")};
static IndexAttrs time_index_attrs = {
    SLOT_ATTR("TimeIndex", "base_offset"), SLOT_ATTR("TimeIndex", "entries"),
    SLOT_ATTR("TimeIndex", "max_entries"), SLOT_ATTR("TimeIndex", "lock"), SLOT_ATTR("TimeIndex", "_mmap")};

static SlotAttr *const all_attrs[] = {
    &segment_log, &segment_base_offset, &segment_rolling_based_timestamp, &segment_created, &segment_roll_jitter_ms,
    &segment_offset_index, &segment_time_index, &segment_so_far, &segment_bytes_since, &segment_index_interval_bytes,
    &records_is_slice, &records_fd, &records_start, &records_size, &records_reserved_end,
    &offset_index_last_offset, &time_index_last_entry,
    &local_log_segments, &local_log_config, &local_log_recovery_point, &local_log_next_offset_metadata,
    &segments_last, &config_segment_bytes, &config_segment_ms,
    &offset_index_attrs.base_offset, &offset_index_attrs.entries, &offset_index_attrs.max_entries,
    &offset_index_attrs.lock, &offset_index_attrs.mmap,
    &time_index_attrs.base_offset, &time_index_attrs.entries, &time_index_attrs.max_entries,
    &time_index_attrs.lock, &time_index_attrs.mmap,
    NULL,
};

static PyObject *s_acquire, *s_release;

enum { DECLINE = 0, OK = 1, FAILED = -1 };

/* An int attribute as int64: OK, DECLINE when it is not an int that fits, FAILED with an
 * exception set when the attribute is missing. */
static int get_int(PyObject *owner, SlotAttr *attr, int64_t *out) {
    PyObject *value = get_attr(owner, attr);
    if (value == NULL) return FAILED;
    int result = DECLINE;
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);  /* cannot fail on an exact int */
        if (!overflow) {
            *out = v;
            result = OK;
        }
    }
    Py_DECREF(value);
    return result;
}

static int set_int(PyObject *owner, SlotAttr *attr, int64_t v) {
    PyObject *value = PyLong_FromLongLong(v);
    if (value == NULL) return -1;
    int failed = set_attr(owner, attr, value);
    Py_DECREF(value);
    return failed;
}

/* A TimestampOffset's two fields: OK, or DECLINE when `pair` is not one of two ints. */
static int timestamp_offset_fields(PyObject *pair, int64_t *timestamp, int64_t *offset) {
    if (Py_TYPE(pair) != timestamp_offset_type || PyTuple_GET_SIZE(pair) != 2) return DECLINE;
    PyObject *t = PyTuple_GET_ITEM(pair, 0), *o = PyTuple_GET_ITEM(pair, 1);
    if (!PyLong_CheckExact(t) || !PyLong_CheckExact(o)) return DECLINE;
    int overflow_t, overflow_o;
    *timestamp = PyLong_AsLongLongAndOverflow(t, &overflow_t);
    *offset = PyLong_AsLongLongAndOverflow(o, &overflow_o);
    return overflow_t || overflow_o ? DECLINE : OK;
}

static PyObject *new_timestamp_offset(int64_t timestamp, int64_t offset) {
    PyObject *pair = timestamp_offset_type->tp_alloc(timestamp_offset_type, 2);
    if (pair == NULL) return NULL;
    PyObject *t = PyLong_FromLongLong(timestamp), *o = PyLong_FromLongLong(offset);
    PyTuple_SET_ITEM(pair, 0, t);  /* steals; a NULL slot is fine for the DECREF below */
    PyTuple_SET_ITEM(pair, 1, o);
    if (t == NULL || o == NULL) { Py_DECREF(pair); return NULL; }
    return pair;
}

/* One index of the append: the object, its lock once taken, its map exported while held. */
typedef struct {
    IndexAttrs *attrs;
    PyObject *index, *lock;
    Py_buffer map;
    int locked, mapped;
    int64_t entries, max_entries, base_offset;
} IndexHold;

/* Takes the index's lock without blocking and exports its map (hold->entries read before):
 * OK, DECLINE (the lock is held elsewhere, the index is closed, or its map has no room for
 * one more entry), FAILED. */
static int hold_index(IndexHold *hold, int64_t entry_size) {
    int r;
    if ((r = get_int(hold->index, &hold->attrs->base_offset, &hold->base_offset)) != OK) return r;
    hold->lock = get_attr(hold->index, &hold->attrs->lock);
    if (hold->lock == NULL) return FAILED;
    PyObject *taken = PyObject_CallMethodOneArg(hold->lock, s_acquire, Py_False);
    if (taken == NULL) return FAILED;
    hold->locked = taken == Py_True;
    Py_DECREF(taken);
    if (!hold->locked) return DECLINE;
    PyObject *map = get_attr(hold->index, &hold->attrs->mmap);
    if (map == NULL) return FAILED;
    if (map == Py_None) { Py_DECREF(map); return DECLINE; }  /* closed */
    r = PyObject_GetBuffer(map, &hold->map, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS);
    Py_DECREF(map);
    if (r < 0) {
        PyErr_Clear();  /* an mmap closed under us: the Python path says what that means */
        return DECLINE;
    }
    hold->mapped = 1;
    return hold->map.len >= (hold->entries + 1) * entry_size ? OK : DECLINE;
}

/* Releases what hold_index took; keeps a pending exception. */
static void release_index(IndexHold *hold) {
    if (hold->mapped) PyBuffer_Release(&hold->map);
    if (hold->locked) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyObject *released = PyObject_CallMethodNoArgs(hold->lock, s_release);
        if (released == NULL) PyErr_WriteUnraisable(hold->lock);
        Py_XDECREF(released);
        PyErr_Restore(type, value, traceback);
    }
    Py_XDECREF(hold->lock);
    Py_XDECREF(hold->index);
}

/* Disk blocks reserved ahead of a large append (FileRecords' module docstring). ext4 maps
 * each new block of a buffered write past the end through its delayed-allocation path
 * (a reservation, a buffer head, an extent status entry per 4 KiB); blocks already
 * allocated skip most of it. Writing 300 MiB in 1 MiB pwrites to a new file took 0.092-
 * 0.095 s of system time, 0.068-0.071 s with 4 MiB reserved at a time
 * (three runs each, alternated); in a broker fed 1 KiB records by two producers at full
 * speed, 15 runs each way alternated, the broker's CPU went from 0.30 to 0.26 s per 300,000
 * records (medians) and msgs/s from 659k to 680k. A reservation covers RESERVE_AHEAD_APPENDS
 * appends of the size that made it, up to RESERVE_AHEAD_BYTES_MAX (one fallocate per four
 * appends; a broker of many partitions fed large batches holds at most that much past the
 * end of each active segment, until trim() frees it). Small appends reserve nothing: what
 * they would save is less than the call. */
#define RESERVE_FROM_APPEND_BYTES (64 * 1024)
#define RESERVE_AHEAD_APPENDS 4
#define RESERVE_AHEAD_BYTES_MAX (4 * 1024 * 1024)

/* How many bytes to reserve from the append at `position` (0: none): a large append past
 * the current reservation, where reservations work (reserved_end -1: refused before). */
static int64_t reserve_ahead_length(int64_t size, int64_t position, int64_t reserved_end) {
#ifdef FALLOC_FL_KEEP_SIZE
    if (size >= RESERVE_FROM_APPEND_BYTES && reserved_end >= 0 && position + size > reserved_end) {
        int64_t ahead = size * RESERVE_AHEAD_APPENDS;
        if (ahead > RESERVE_AHEAD_BYTES_MAX) ahead = RESERVE_AHEAD_BYTES_MAX;
        return ahead > size ? ahead : size;
    }
#else
    (void)size; (void)position; (void)reserved_end;
#endif
    return 0;
}

/* pwrite of all `size` bytes at `position`, the GIL released, resuming a short write and
 * retrying EINTR after running signal handlers (as os.pwrite does); first, when
 * `reserve_length` > 0, fallocate of that many bytes from `position`, keeping the file's
 * size, in the same release of the GIL (*reserved: whether it took; a refusal changes
 * nothing else, and a full disk then fails the pwrite as it would have). Returns 0, or -1
 * with OSError set; *written is what reached the file either way. */
static int write_fully(int fd, const uint8_t *data, int64_t size, int64_t position, int64_t reserve_length,
                       int *reserved, int64_t *written) {
    *written = 0;
    *reserved = 0;
    while (*written < size) {
        ssize_t n;
        Py_BEGIN_ALLOW_THREADS
#ifdef FALLOC_FL_KEEP_SIZE
        if (reserve_length > 0) {
            *reserved = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)position, (off_t)reserve_length) == 0;
            reserve_length = 0;
        }
#endif
        n = pwrite(fd, data + *written, (size_t)(size - *written), (off_t)(position + *written));
        Py_END_ALLOW_THREADS
        if (n < 0) {
            if (errno == EINTR && PyErr_CheckSignals() == 0) continue;
            if (!PyErr_Occurred()) PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        if (n == 0) {  /* no progress and no error: do not spin */
            errno = EIO;
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        *written += n;
    }
    return 0;
}

/* UnifiedLog's roll check and LogSegment.append of the `size` bytes at `data` (one
 * validated buffer, offsets assigned) to `segment`: OK when appended as LogSegment.append
 * would have, with the segment's new size in *new_size; DECLINE with nothing done (see the
 * header); FAILED with an exception set. */
static int segment_append(PyObject *segment, const uint8_t *data, int64_t size, long long largest_offset,
                          long long largest_timestamp, long long shallow_offset, long long max_segment_bytes,
                          long long max_segment_ms, long long now, int64_t *new_size) {
    PyObject *log_records = NULL, *so_far = NULL, *new_so_far = NULL, *rolling = NULL;
    IndexHold offset_hold = {.attrs = &offset_index_attrs}, time_hold = {.attrs = &time_index_attrs};
    int r = DECLINE;
    int64_t fd, start, position, reserved_end, base_offset, created, jitter, since, interval;
    int64_t so_far_timestamp, so_far_offset, last_offset, last_timestamp, last_time_offset;

#define STEP(call) do { if ((r = (call)) != OK) goto done; } while (0)
#define REQUIRE(condition) do { if (!(condition)) { r = DECLINE; goto done; } } while (0)
#define GOT(object) do { if ((object) == NULL) { r = FAILED; goto done; } } while (0)
    REQUIRE(size > 0);
    log_records = get_attr(segment, &segment_log);
    GOT(log_records);
    PyObject *is_slice = get_attr(log_records, &records_is_slice);
    GOT(is_slice);
    Py_DECREF(is_slice);  /* a bool: the identity test below stays valid */
    REQUIRE(is_slice == Py_False);
    STEP(get_int(log_records, &records_fd, &fd));
    STEP(get_int(log_records, &records_start, &start));
    STEP(get_int(log_records, &records_size, &position));
    STEP(get_int(log_records, &records_reserved_end, &reserved_end));
    STEP(get_int(segment, &segment_base_offset, &base_offset));

    /* LogSegment.should_roll, each test in its order there. */
    REQUIRE(position <= max_segment_bytes - size);
    if (position > 0) {
        rolling = get_attr(segment, &segment_rolling_based_timestamp);
        GOT(rolling);
        REQUIRE(rolling != Py_None && PyLong_CheckExact(rolling));  /* None: Python loads it from the file */
        int overflow;
        int64_t rolling_based = PyLong_AsLongLongAndOverflow(rolling, &overflow);
        REQUIRE(!overflow);
        STEP(get_int(segment, &segment_roll_jitter_ms, &jitter));
        int64_t waited;
        if (rolling_based >= 0) {
            waited = largest_timestamp - rolling_based;
        } else {
            STEP(get_int(segment, &segment_created, &created));
            waited = now - created;
        }
        REQUIRE(waited <= max_segment_ms - jitter);
    }
    offset_hold.index = get_attr(segment, &segment_offset_index);
    GOT(offset_hold.index);
    time_hold.index = get_attr(segment, &segment_time_index);
    GOT(time_hold.index);
    REQUIRE(offset_hold.index != Py_None && time_hold.index != Py_None);  /* not mapped yet: Python maps them */
    STEP(get_int(offset_hold.index, &offset_index_attrs.entries, &offset_hold.entries));
    STEP(get_int(offset_hold.index, &offset_index_attrs.max_entries, &offset_hold.max_entries));
    STEP(get_int(time_hold.index, &time_index_attrs.entries, &time_hold.entries));
    STEP(get_int(time_hold.index, &time_index_attrs.max_entries, &time_hold.max_entries));
    REQUIRE(offset_hold.entries < offset_hold.max_entries && time_hold.entries < time_hold.max_entries - 1);
    REQUIRE(largest_offset - base_offset >= 0 && largest_offset - base_offset <= INT32_MAX_VALUE);

    /* LogSegment.append's own checks. */
    REQUIRE(size <= INT32_MAX_VALUE - position);
    so_far = get_attr(segment, &segment_so_far);
    GOT(so_far);
    REQUIRE(so_far != unknown_timestamp_offset);  /* read from the time index first, in Python */
    STEP(timestamp_offset_fields(so_far, &so_far_timestamp, &so_far_offset));
    int so_far_moves = largest_timestamp > so_far_timestamp;
    if (so_far_moves) {
        so_far_timestamp = largest_timestamp;
        so_far_offset = shallow_offset;
    }
    STEP(get_int(segment, &segment_bytes_since, &since));
    STEP(get_int(segment, &segment_index_interval_bytes, &interval));
    int index_due = since > interval, time_entry_due = 0;
    if (index_due) {
        /* OffsetIndex.append(largest_offset, position) */
        STEP(hold_index(&offset_hold, OFFSET_ENTRY_SIZE));
        if (offset_hold.entries != 0) {
            STEP(get_int(offset_hold.index, &offset_index_last_offset, &last_offset));
            REQUIRE(largest_offset > last_offset);
        }
        REQUIRE(largest_offset - offset_hold.base_offset >= 0
                && largest_offset - offset_hold.base_offset <= INT32_MAX_VALUE);
        /* TimeIndex.maybe_append(so_far_timestamp, so_far_offset); its lock is taken only
         * when it writes an entry (its checks read state that only a writer holding the
         * partition lock, as this caller does, moves). */
        PyObject *last_entry = get_attr(time_hold.index, &time_index_last_entry);
        GOT(last_entry);
        r = timestamp_offset_fields(last_entry, &last_timestamp, &last_time_offset);
        Py_DECREF(last_entry);
        if (r != OK) goto done;
        if (time_hold.entries != 0) REQUIRE(so_far_offset >= last_time_offset && so_far_timestamp >= last_timestamp);
        time_entry_due = so_far_timestamp > last_timestamp;
        if (time_entry_due) {
            STEP(hold_index(&time_hold, TIME_ENTRY_SIZE));
            REQUIRE(so_far_offset - time_hold.base_offset >= 0
                    && so_far_offset - time_hold.base_offset <= INT32_MAX_VALUE);
        }
    }

    /* Every check passed: write, then move the state as the Python does. */
    r = FAILED;
    if (position == 0 && set_int(segment, &segment_rolling_based_timestamp, largest_timestamp) < 0) goto done;
    int64_t written, reserve_length = reserve_ahead_length(size, start + position, reserved_end);
    int reserved;
    if (write_fully((int)fd, data, size, start + position, reserve_length, &reserved, &written) < 0) {
        /* FileRecords.cut_failed_write: the file back to where the write began, best effort,
         * keeping the write's own OSError. */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        int cut;
        Py_BEGIN_ALLOW_THREADS
        cut = ftruncate((int)fd, (off_t)(start + position));
        Py_END_ALLOW_THREADS
        (void)cut;
        if (set_int(log_records, &records_reserved_end, 0) < 0) PyErr_Clear();
        PyErr_Restore(type, value, traceback);
        goto done;
    }
    if (reserve_length > 0
            && set_int(log_records, &records_reserved_end, reserved ? start + position + reserve_length : -1) < 0)
        goto done;
    if (set_int(log_records, &records_size, position + written) < 0) goto done;
    if (so_far_moves) {
        new_so_far = new_timestamp_offset(so_far_timestamp, so_far_offset);
        if (new_so_far == NULL || set_attr(segment, &segment_so_far, new_so_far) < 0) goto done;
    } else {
        new_so_far = so_far;
        Py_INCREF(new_so_far);
    }
    if (index_due) {
        uint8_t *entry = (uint8_t *)offset_hold.map.buf + offset_hold.entries * OFFSET_ENTRY_SIZE;
        write_i32(entry, (int32_t)(largest_offset - offset_hold.base_offset));
        write_i32(entry + 4, (int32_t)position);
        if (set_int(offset_hold.index, &offset_index_attrs.entries, offset_hold.entries + 1) < 0
                || set_int(offset_hold.index, &offset_index_last_offset, largest_offset) < 0)
            goto done;
        if (time_entry_due) {
            entry = (uint8_t *)time_hold.map.buf + time_hold.entries * TIME_ENTRY_SIZE;
            write_i64(entry, so_far_timestamp);
            write_i32(entry + 8, (int32_t)(so_far_offset - time_hold.base_offset));
            if (set_int(time_hold.index, &time_index_attrs.entries, time_hold.entries + 1) < 0
                    || set_attr(time_hold.index, &time_index_last_entry, new_so_far) < 0)
                goto done;
        }
        since = 0;
    }
    if (set_int(segment, &segment_bytes_since, since + size) < 0) goto done;
    r = OK;
#undef STEP
#undef REQUIRE
#undef GOT

done:
    release_index(&time_hold);
    release_index(&offset_hold);
    Py_XDECREF(new_so_far);
    Py_XDECREF(so_far);
    Py_XDECREF(rolling);
    Py_XDECREF(log_records);
    if (r == OK) *new_size = position + size;
    return r;
}

/* segment_append_unless_roll_due(segment, records, largest_offset, largest_timestamp_ms,
 *     shallow_offset_of_max_timestamp, max_segment_bytes, max_segment_ms, now_ms) -> bool
 *
 * segment_append for one segment: True when appended, False when nothing was done. */
static PyObject *segment_append_unless_roll_due(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "segment_append_unless_roll_due takes 8 arguments");
        return NULL;
    }
    long long largest_offset = as_i64(args[2]), largest_timestamp = as_i64(args[3]), shallow = as_i64(args[4]);
    long long max_segment_bytes = as_i64(args[5]), max_segment_ms = as_i64(args[6]), now = as_i64(args[7]);
    if (PyErr_Occurred()) return NULL;
    Py_buffer data;
    if (PyObject_GetBuffer(args[1], &data, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    int64_t new_size;
    int r = segment_append(args[0], data.buf, data.len, largest_offset, largest_timestamp, shallow,
                           max_segment_bytes, max_segment_ms, now, &new_size);
    PyBuffer_Release(&data);
    if (r == FAILED) return NULL;
    return PyBool_FromLong(r == OK);
}

/* append_unless_roll_due(local_log, records, largest_offset, largest_timestamp_ms,
 *     shallow_offset_of_max_timestamp, now_ms) -> bool
 *
 * LocalLog.append when the active segment need not roll first: segment_append to the
 * active segment with the log's segment.bytes and segment.ms, then LocalLog's
 * update_log_end_offset (a new LogOffsetMetadata at the segment's new size). False with
 * nothing done also when the recovery point is past the new log end (update_log_end_offset
 * would move it: the Python path does). One call instead of the five Python frames of
 * LocalLog.append, LogSegment.append and the roll check: on the produce path each frame
 * costs more than its instructions, its memory evicted by every batch's write. */
static PyObject *append_unless_roll_due(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "append_unless_roll_due takes 6 arguments");
        return NULL;
    }
    PyObject *local_log = args[0];
    long long largest_offset = as_i64(args[2]), largest_timestamp = as_i64(args[3]), shallow = as_i64(args[4]);
    long long now = as_i64(args[5]);
    if (PyErr_Occurred()) return NULL;
    PyObject *segments = NULL, *segment = NULL, *config = NULL, *metadata = NULL, *result = NULL;
    int64_t max_segment_bytes, max_segment_ms, recovery_point, base_offset, new_size;
    int r;
    Py_buffer data;
    if (PyObject_GetBuffer(args[1], &data, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if ((segments = get_attr(local_log, &local_log_segments)) == NULL
            || (segment = get_attr(segments, &segments_last)) == NULL
            || (config = get_attr(local_log, &local_log_config)) == NULL)
        goto failed;
    if (segment == Py_None) {  /* no segment: LogSegments.active_segment's assertion is Python's to raise */
        r = DECLINE;
        goto declined_or_failed;
    }
    if ((r = get_int(config, &config_segment_bytes, &max_segment_bytes)) != OK
            || (r = get_int(config, &config_segment_ms, &max_segment_ms)) != OK
            || (r = get_int(local_log, &local_log_recovery_point, &recovery_point)) != OK
            || (r = get_int(segment, &segment_base_offset, &base_offset)) != OK)
        goto declined_or_failed;
    if (recovery_point > largest_offset + 1) {
        r = DECLINE;
        goto declined_or_failed;
    }
    r = segment_append(segment, data.buf, data.len, largest_offset, largest_timestamp, shallow, max_segment_bytes,
                       max_segment_ms, now, &new_size);
    if (r != OK) goto declined_or_failed;
    metadata = log_offset_metadata_type->tp_alloc(log_offset_metadata_type, 3);
    if (metadata == NULL) goto failed;
    PyObject *fields[3] = {PyLong_FromLongLong(largest_offset + 1), PyLong_FromLongLong(base_offset),
                           PyLong_FromLongLong(new_size)};
    for (int i = 0; i < 3; i++) PyTuple_SET_ITEM(metadata, i, fields[i]);  /* steals; NULLs are DECREF-safe */
    if (fields[0] == NULL || fields[1] == NULL || fields[2] == NULL
            || set_attr(local_log, &local_log_next_offset_metadata, metadata) < 0)
        goto failed;
    result = Py_NewRef(Py_True);
    goto out;

declined_or_failed:
    if (r == DECLINE) result = Py_NewRef(Py_False);
    goto out;
failed:
    result = NULL;
out:
    Py_XDECREF(metadata);
    Py_XDECREF(config);
    Py_XDECREF(segment);
    Py_XDECREF(segments);
    PyBuffer_Release(&data);
    return result;
}

SLOT_ATTRIBUTES_FUNCTION(all_attrs)

static PyMethodDef methods[] = {
    SLOT_ATTRIBUTES_METHOD,
    {"segment_append_unless_roll_due", (PyCFunction)(void (*)(void))segment_append_unless_roll_due, METH_FASTCALL,
     "LogSegment.append of one validated buffer when no roll is due: True, or False with nothing done."},
    {"append_unless_roll_due", (PyCFunction)(void (*)(void))append_unless_roll_due, METH_FASTCALL,
     "LocalLog.append of one validated buffer when no roll is due: True, or False with nothing done."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "_segment_fast", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__segment_fast(void) {
    if (slot_attrs_init(all_attrs) || intern(&s_acquire, "acquire") || intern(&s_release, "release"))
        return NULL;
    if ((timestamp_offset_type = tuple_type_of("franz.storage.index", "TimestampOffset")) == NULL
            || (log_offset_metadata_type = tuple_type_of("franz.storage.segment", "LogOffsetMetadata")) == NULL
            || (unknown_timestamp_offset = attribute_of("franz.storage.segment", "UNKNOWN_TIMESTAMP_OFFSET")) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
