/*
 * The common case of LogValidator.assignOffsetsNonCompressed, in C.
 *
 * franz/storage/validator.py is the whole validator and the reference: every rule and
 * every error message lives there. This module takes only the produce that every client
 * sends all day (one uncompressed v2 batch, CreateTime, nothing wrong with it) and does
 * what the Python does for it, record by record, at C speed:
 *
 *   - the batch: the whole buffer, magic 2, base offset 0, within max.message.bytes, a
 *     positive record count matching lastOffsetDelta, not a control batch, no LogAppendTime
 *     bit, a producer id only with a sequence, and its CRC32C (by the crc32c package);
 *   - each record, walked as DefaultRecordBatch's iterator reads it: sizes, varints,
 *     headers, the batch's bytes used up exactly; a key on compacted topics; a timestamp
 *     within [earliest_ms, latest_ms] unless NO_TIMESTAMP; the records' own max timestamp
 *     equal to the header's;
 *   - then, and only when all of that passed, stamps the base offset and leader epoch in
 *     place (fields the CRC does not cover).
 *
 * Anything else returns None before a byte is written, and the caller runs the Python
 * path, which refuses with Kafka's error or handles what this does not (compression,
 * LogAppendTime, a header whose max timestamp must be rewritten, a trailing partial
 * batch, a second batch). So this module never decides an error, and the two paths cannot
 * disagree on one; tests/storage/test_validator_fast.py checks that they agree on the rest.
 *
 * walk_records is the record walk alone, for the batches that take the Python path
 * without anything wrong with them (compressed ones once decompressed, LogAppendTime
 * topics, coordinator writes), with the same contract: a result, or None and Python
 * walks them again to say what is wrong.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_fast_common.h"

#define BATCH_OVERHEAD 61          /* a v2 batch header, LOG_OVERHEAD included */
#define LOG_OVERHEAD 12            /* base offset + batch length */
#define CRC_COVERED_FROM 21        /* the CRC covers attributes to the end */
#define HEADER_FIELDS 13           /* franz.records.BatchHeader */
#define NO_TIMESTAMP (-1LL)
#define ATTR_CODEC_MASK 0x07
#define ATTR_TIMESTAMP_TYPE 0x08
#define ATTR_CONTROL 0x20

static PyObject *crc32c_function;  /* crc32c.crc32c */
static PyTypeObject *batch_header_type;  /* franz.records.BatchHeader (a tuple subclass) */

/* Zig-zag varints (ByteUtils.readVarint/readVarlong): at most 5 and 10 bytes. Most varints
 * of a record are one or two bytes.
 *
 * raw_varint returns a varint's raw value (still zig-zag encoded) and moves *cursor past
 * it, or returns -1 when it runs past `end` or past 5 bytes ("not the common case" to
 * every caller). With `unbounded` (a constant at each call site) the caller guarantees 5
 * readable bytes at *cursor and `end` is not looked at. */
static inline __attribute__((always_inline)) int64_t raw_varint(const uint8_t **cursor, const uint8_t *end,
                                                               int unbounded) {
    const uint8_t *p = *cursor;
    uint32_t raw;
    if (unbounded || end - p >= 5) {  /* no bound check per byte */
        uint32_t b = p[0];
        if (!(b & 0x80)) { *cursor = p + 1; return b; }
        raw = b & 0x7f;
        b = p[1]; raw |= (b & 0x7f) << 7;
        if (!(b & 0x80)) { *cursor = p + 2; return raw; }
        b = p[2]; raw |= (b & 0x7f) << 14;
        if (!(b & 0x80)) { *cursor = p + 3; return raw; }
        b = p[3]; raw |= (b & 0x7f) << 21;
        if (!(b & 0x80)) { *cursor = p + 4; return raw; }
        b = p[4];
        if (b & 0x80) return -1;
        *cursor = p + 5;
        return raw | (b << 28);
    }
    raw = 0;
    for (int shift = 0;; shift += 7) {
        if (p >= end || shift > 28) return -1;
        uint8_t b = *p++;
        raw |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    *cursor = p;
    return raw;
}

static inline int32_t zigzag32(uint32_t raw) { return (int32_t)(raw >> 1) ^ -(int32_t)(raw & 1); }

/* A varint bounded by `end`, decoded into *out: 1, or 0 as raw_varint's -1. */
static inline int read_varint(const uint8_t **cursor, const uint8_t *end, int32_t *out) {
    int64_t raw = raw_varint(cursor, end, 0);
    if (raw < 0) return 0;
    *out = zigzag32((uint32_t)raw);
    return 1;
}

static inline int read_varlong(const uint8_t **cursor, const uint8_t *end, int64_t *out) {
    const uint8_t *p = *cursor;
    if (p < end && !(*p & 0x80)) {  /* a timestamp delta is mostly small */
        *cursor = p + 1;
        *out = (int64_t)(*p >> 1) ^ -(int64_t)(*p & 1);
        return 1;
    }
    uint64_t raw = 0;
    for (int shift = 0;; shift += 7) {
        if (p >= end || shift > 63) return 0;
        uint8_t b = *p++;
        raw |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    *cursor = p;
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    return 1;
}

/* Skips a length-prefixed field of `length` bytes (-1: null, allowed only if nullable). */
static inline int skip_bytes(const uint8_t **cursor, const uint8_t *end, int64_t length, int nullable) {
    if (length < 0) return nullable && length == -1;
    if (end - *cursor < length) return 0;
    *cursor += length;
    return 1;
}

/* A walk of this many bytes or more runs with the GIL released: the broker's network
 * thread then reads and parses requests while the append thread walks a large batch
 * (~0.5 ms per MiB of 100-byte records). Below it, handing the GIL over costs more than
 * it frees. The buffer stays exported (Py_buffer held) meanwhile, so it cannot be resized
 * under the walk. The crc32c package releases the GIL on its own for large buffers. */
#define WALK_WITHOUT_GIL_FROM_BYTES (64 * 1024)

/* Bytes that must follow a record for record_fields to read it unbounded: its varints
 * start at most 5 bytes past the record's end (each skip is checked against the end first)
 * and read at most 5 bytes. */
#define UNBOUNDED_READS_MARGIN 16

/* One record's fields after its size varint, in [p, record_end), as DefaultRecord.readFrom
 * reads them: 1 when they are well formed, end exactly at record_end and have a key where
 * `compacted` requires one; then *timestamp_delta is the record's and *raw_offset_delta
 * its offset delta's raw varint. 0 otherwise. `unbounded` (a constant at each call site):
 * at least UNBOUNDED_READS_MARGIN bytes follow record_end, so the varints of the record
 * are read without looking at `end`. Headers, rare, are read bounded. */
static inline __attribute__((always_inline)) int record_fields(const uint8_t *p, const uint8_t *record_end,
                                                              const uint8_t *end, int compacted, int unbounded,
                                                              int64_t *timestamp_delta, int64_t *raw_offset_delta) {
    p++;  /* attributes: unused in v2 */
    if (!read_varlong(&p, end, timestamp_delta) || p > record_end) return 0;
    int64_t raw_offset = raw_varint(&p, end, unbounded), raw_key = raw_varint(&p, end, unbounded);
    if (raw_offset < 0 || raw_key < 0) return 0;
    int32_t key_size = zigzag32((uint32_t)raw_key);
    if (key_size >= 0) {
        if (key_size > record_end - p) return 0;
        p += key_size;
    } else if (key_size != -1 || compacted || p > record_end) {
        return 0;
    }
    int64_t raw_value = raw_varint(&p, end, unbounded);
    if (raw_value < 0) return 0;
    int32_t value_size = zigzag32((uint32_t)raw_value);
    if (value_size >= 0) {
        if (value_size > record_end - p) return 0;
        p += value_size;
    } else if (value_size != -1 || p > record_end) {
        return 0;
    }
    int64_t raw_headers = raw_varint(&p, end, unbounded);
    if (raw_headers != 0) {
        int32_t header_count = zigzag32((uint32_t)raw_headers);
        if (raw_headers < 0 || header_count < 0) return 0;
        for (int32_t h = 0; h < header_count; h++) {
            int32_t header_key_size, header_value_size;
            if (p >= record_end) return 0;  /* more headers declared than the record holds */
            if (!read_varint(&p, end, &header_key_size) || !skip_bytes(&p, end, header_key_size, 0)
                    || !read_varint(&p, end, &header_value_size) || !skip_bytes(&p, end, header_value_size, 1))
                return 0;
        }
    }
    *raw_offset_delta = raw_offset;
    return p == record_end;
}

/* Walks `count` records in [p, end) as DefaultRecord.readFrom reads each (the records of
 * an uncompressed batch, or a compressed one's after decompression). Returns 1 when all
 * are well formed, fill the bytes exactly, have keys where required and timestamps
 * within [earliest_ms, latest_ms] unless NO_TIMESTAMP; then *records_max is their max
 * timestamp (NO_TIMESTAMP when none has one) and *in_sequence whether their offset
 * deltas run 0..count-1. A record whose fields do not end exactly at its size is
 * declined. */
static int records_are_common_case(const uint8_t *p, const uint8_t *end, int32_t count, int64_t base_timestamp,
                                   int64_t earliest_ms, int64_t latest_ms, int compacted, int64_t *records_max,
                                   int *in_sequence) {
    int64_t batch_max = NO_TIMESTAMP;
    int sequential = 1;
    for (int32_t index = 0; index < count; index++) {
        int32_t size;
        int64_t timestamp_delta, raw_offset_delta, timestamp;
        if (!read_varint(&p, end, &size) || size < 1 || end - p < size) return 0;
        const uint8_t *record_end = p + size;
        /* Two copies of record_fields: unbounded for all but the last record or so. */
        if (!(end - record_end >= UNBOUNDED_READS_MARGIN
                  ? record_fields(p, record_end, end, compacted, 1, &timestamp_delta, &raw_offset_delta)
                  : record_fields(p, record_end, end, compacted, 0, &timestamp_delta, &raw_offset_delta)))
            return 0;
        p = record_end;
        if (__builtin_add_overflow(base_timestamp, timestamp_delta, &timestamp)) return 0;  /* Java wraps */
        if (timestamp != NO_TIMESTAMP && (timestamp < earliest_ms || timestamp > latest_ms)) return 0;
        if (timestamp > batch_max) batch_max = timestamp;
        sequential &= raw_offset_delta == 2 * (int64_t)index;  /* the zig-zag encoding of index */
    }
    if (p != end) return 0;
    *records_max = batch_max;
    *in_sequence = sequential;
    return 1;
}

/* records_are_common_case, without the GIL when the records are large. */
static int walk(const uint8_t *p, const uint8_t *end, int32_t count, int64_t base_timestamp, int64_t earliest_ms,
                int64_t latest_ms, int compacted, int64_t *records_max, int *in_sequence) {
    if (end - p < WALK_WITHOUT_GIL_FROM_BYTES)
        return records_are_common_case(p, end, count, base_timestamp, earliest_ms, latest_ms, compacted, records_max,
                                       in_sequence);
    int walked;
    Py_BEGIN_ALLOW_THREADS
    walked = records_are_common_case(p, end, count, base_timestamp, earliest_ms, latest_ms, compacted, records_max,
                                     in_sequence);
    Py_END_ALLOW_THREADS
    return walked;
}

static PyObject *new_header(const uint8_t *h) {
    PyObject *header = batch_header_type->tp_alloc(batch_header_type, HEADER_FIELDS);
    if (header == NULL) return NULL;
    PyObject *fields[HEADER_FIELDS] = {
        PyLong_FromLongLong(read_i64(h)), PyLong_FromLong(read_i32(h + 8)), PyLong_FromLong(read_i32(h + 12)),
        PyLong_FromLong((int8_t)h[16]), PyLong_FromUnsignedLong((uint32_t)read_i32(h + 17)),
        PyLong_FromLong(read_i16(h + 21)), PyLong_FromLong(read_i32(h + 23)), PyLong_FromLongLong(read_i64(h + 27)),
        PyLong_FromLongLong(read_i64(h + 35)), PyLong_FromLongLong(read_i64(h + 43)),
        PyLong_FromLong(read_i16(h + 51)), PyLong_FromLong(read_i32(h + 53)), PyLong_FromLong(read_i32(h + 57)),
    };
    int failed = 0;
    for (int i = 0; i < HEADER_FIELDS; i++) {
        if (fields[i] == NULL) failed = 1;
        PyTuple_SET_ITEM(header, i, fields[i]);  /* steals; a NULL slot is fine for the DECREF below */
    }
    if (failed) { Py_DECREF(header); return NULL; }
    return header;
}

/* crc32c over buf[from, to) through the crc32c package; -1 with an exception set on failure. */
static int64_t checksum(uint8_t *from, Py_ssize_t length) {
    PyObject *view = PyMemoryView_FromMemory((char *)from, length, PyBUF_READ);
    if (view == NULL) return -1;
    PyObject *result = PyObject_CallOneArg(crc32c_function, view);
    Py_DECREF(view);
    if (result == NULL) return -1;
    unsigned long value = PyLong_AsUnsignedLong(result);
    Py_DECREF(result);
    if (value == (unsigned long)-1 && PyErr_Occurred()) return -1;
    return (int64_t)value;
}

/* assign_offsets_non_compressed(buffer, next_offset, partition_leader_epoch, now_ms,
 *     timestamp_before_max_ms, timestamp_after_max_ms, max_message_bytes, compacted,
 *     header_without_producer)
 *   -> (header, last_offset, max_timestamp, shallow_offset_of_max_timestamp, record_count) or None
 *
 * `buffer` must hold exactly one batch, as a v2 produce does per partition (more, or
 * bytes after it, is for the Python path to refuse or trim). `header` is the batch's
 * BatchHeader as sent, before the stamps. */
static PyObject *assign_offsets_non_compressed(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "assign_offsets_non_compressed takes 9 arguments");
        return NULL;
    }
    long long next_offset = as_i64(args[1]);
    long partition_leader_epoch = PyLong_AsLong(args[2]);
    long long now_ms = as_i64(args[3]);
    long long before_max_ms = as_i64(args[4]);
    long long after_max_ms = as_i64(args[5]);
    long long max_message_bytes = as_i64(args[6]);
    int compacted = PyObject_IsTrue(args[7]);
    int header_without_producer = PyObject_IsTrue(args[8]);
    if (PyErr_Occurred()) return NULL;
    /* validator._timestamp_window: the window clamped to int64 (before.max.ms defaults to
     * Long.MAX_VALUE, and Kafka's subtraction then saturates the same way in effect). */
    long long earliest_ms, latest_ms;
    if (__builtin_sub_overflow(now_ms, before_max_ms, &earliest_ms)) earliest_ms = INT64_MIN;
    if (__builtin_add_overflow(now_ms, after_max_ms, &latest_ms)) latest_ms = INT64_MAX;

    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    uint8_t *h = (uint8_t *)view.buf;
    Py_ssize_t length = view.len;

    /* Every check first, nothing written. */
    if (length < BATCH_OVERHEAD) goto common_case_not_met;
    int64_t size = (int64_t)read_i32(h + 8) + LOG_OVERHEAD;
    int16_t attributes = read_i16(h + 21);
    int32_t last_offset_delta = read_i32(h + 23), count = read_i32(h + 57);
    int64_t max_timestamp = read_i64(h + 35);
    if (size != length || h[16] != 2 || read_i64(h) != 0 || size > max_message_bytes || count <= 0
            || last_offset_delta != count - 1 || (attributes & (ATTR_CONTROL | ATTR_CODEC_MASK | ATTR_TIMESTAMP_TYPE))
            || (read_i64(h + 43) >= 0 && read_i32(h + 53) < 0))
        goto common_case_not_met;
    int64_t crc = checksum(h + CRC_COVERED_FROM, length - CRC_COVERED_FROM);
    if (crc < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (crc != (int64_t)(uint32_t)read_i32(h + 17)) goto common_case_not_met;
    int64_t records_max;
    int in_sequence;
    if (!walk(h + BATCH_OVERHEAD, h + length, count, read_i64(h + 27), earliest_ms, latest_ms, compacted,
              &records_max, &in_sequence)
            || records_max != max_timestamp)
        goto common_case_not_met;

    /* The header as sent, then the stamps (fields the CRC does not cover). Without a
     * producer id the append path reads nothing from the header, and its 13 ints and a
     * GC-tracked tuple cost more than the rest of this return: None, unless asked. */
    PyObject *header;
    if (read_i64(h + 43) >= 0 || header_without_producer) {
        header = new_header(h);
        if (header == NULL) {
            PyBuffer_Release(&view);
            return NULL;
        }
    } else {
        header = Py_NewRef(Py_None);
    }
    write_i64(h, next_offset);
    write_i32(h + 12, (int32_t)partition_leader_epoch);
    PyBuffer_Release(&view);
    long long last_offset = next_offset + count - 1;
    return Py_BuildValue("(NLLLi)", header, last_offset, (long long)max_timestamp,
                         max_timestamp > NO_TIMESTAMP ? last_offset : -1LL, (int)count);

common_case_not_met:
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* walk_records(data, count, base_timestamp, earliest_ms, latest_ms, compacted)
 *   -> (records_max_timestamp, offsets_in_sequence) or None
 *
 * The record walk alone, for the batches the Python path validates (compressed ones,
 * after it decompressed them; LogAppendTime topics; coordinator writes): None means
 * "walk them in Python", which then names what is wrong. */
static PyObject *walk_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "walk_records takes 6 arguments");
        return NULL;
    }
    long count = PyLong_AsLong(args[1]);
    long long base_timestamp = as_i64(args[2]);
    long long earliest_ms = as_i64(args[3]);
    long long latest_ms = as_i64(args[4]);
    int compacted = PyObject_IsTrue(args[5]);
    if (PyErr_Occurred()) return NULL;
    if (count <= 0 || count > INT32_MAX) Py_RETURN_NONE;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    const uint8_t *data = (const uint8_t *)view.buf;
    int64_t records_max;
    int in_sequence;
    int walked = walk(data, data + view.len, (int32_t)count, base_timestamp, earliest_ms, latest_ms, compacted,
                      &records_max, &in_sequence);
    PyBuffer_Release(&view);
    if (!walked) Py_RETURN_NONE;
    return Py_BuildValue("(LO)", (long long)records_max, in_sequence ? Py_True : Py_False);
}

/* A varint (max_bytes 5) or varlong (10) as ByteUtils.writeVarint/writeVarlong writes it:
 * not minimal if a last byte of zero follows a continuation, nor if its last possible byte
 * carries bits past the type's width (Java's reader drops them, so a rewrite would differ).
 * Returns the bytes read, or 0 for anything else or when it runs past `end`; *value is the
 * zig-zag decoded value. */
static inline int minimal_varlong(const uint8_t *p, const uint8_t *end, int max_bytes, int64_t *value) {
    uint64_t raw = 0;
    for (int i = 0; i < max_bytes && p + i < end; i++) {
        raw |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (i > 0 && p[i] == 0) return 0;  /* not minimal */
            if (i == max_bytes - 1 && p[i] > (max_bytes == 5 ? 0x0f : 0x01)) return 0;  /* past 32 or 64 bits */
            *value = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return i + 1;
        }
    }
    return 0;
}

/* Reads one minimal varint field into *value and moves *p past it; 0 when it is not one. */
static inline int take(const uint8_t **p, const uint8_t *end, int max_bytes, int64_t *value) {
    int used = minimal_varlong(*p, end, max_bytes, value);
    *p += used;
    return used;
}

/* canonical_records(data, count, base_timestamp) -> index of the first record holding the
 * largest timestamp (-1 when none is above NO_TIMESTAMP), or None
 *
 * Whether `data` (a batch's records, decompressed) is byte for byte what Kafka's
 * MemoryRecordsBuilder writes when it rebuilds these records at offsets 0..count-1
 * (LogValidator.buildRecordsAndAssignOffsets, DefaultRecord.writeTo): every varint minimal,
 * record attributes 0, offset deltas 0..count-1, the first record's timestamp the base (a
 * rebuilt batch's base timestamp is its first record's), and header keys in ASCII (Kafka
 * decodes a key as UTF-8 and encodes it again; ASCII is the part that surely survives that
 * unchanged). Then the validator compresses these bytes as they are instead of decoding and
 * re-encoding every record. Called only on records the walk already accepted. */
static PyObject *canonical_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "canonical_records takes 3 arguments");
        return NULL;
    }
    long count = PyLong_AsLong(args[1]);
    long long base_timestamp = as_i64(args[2]);
    if (PyErr_Occurred()) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    const uint8_t *p = (const uint8_t *)view.buf, *end = p + view.len;
    long long max_timestamp = NO_TIMESTAMP;
    long max_index = -1;
    int canonical = count > 0;
    for (long index = 0; canonical && index < count; index++) {
        int64_t size, timestamp_delta, offset_delta, key_size, value_size, header_count;
        canonical = take(&p, end, 5, &size) && size >= 1 && end - p >= size;
        if (!canonical) break;
        const uint8_t *record_end = p + size;
        canonical = *p++ == 0  /* attributes */
                    && take(&p, record_end, 10, &timestamp_delta) && (index > 0 || timestamp_delta == 0)
                    && take(&p, record_end, 5, &offset_delta) && offset_delta == index
                    && take(&p, record_end, 5, &key_size) && skip_bytes(&p, record_end, key_size, 1)
                    && take(&p, record_end, 5, &value_size) && skip_bytes(&p, record_end, value_size, 1)
                    && take(&p, record_end, 5, &header_count) && header_count >= 0;
        for (int64_t h = 0; canonical && h < header_count; h++) {
            int64_t header_key_size, header_value_size;
            canonical = take(&p, record_end, 5, &header_key_size) && header_key_size >= 0
                        && record_end - p >= header_key_size;
            for (int64_t i = 0; canonical && i < header_key_size; i++) canonical = p[i] < 0x80;
            canonical = canonical && skip_bytes(&p, record_end, header_key_size, 0)
                        && take(&p, record_end, 5, &header_value_size)
                        && skip_bytes(&p, record_end, header_value_size, 1);
        }
        canonical = canonical && p == record_end;
        long long timestamp = base_timestamp + timestamp_delta;  /* the walk ruled out overflow */
        /* The builder refuses a negative timestamp other than NO_TIMESTAMP: leave that to it. */
        canonical = canonical && (timestamp >= 0 || timestamp == NO_TIMESTAMP);
        if (canonical && timestamp > max_timestamp) {
            max_timestamp = timestamp;
            max_index = index;
        }
    }
    canonical = canonical && p == end;
    PyBuffer_Release(&view);
    if (!canonical) Py_RETURN_NONE;
    return PyLong_FromLong(max_index);
}

static PyMethodDef methods[] = {
    {"assign_offsets_non_compressed", (PyCFunction)(void (*)(void))assign_offsets_non_compressed, METH_FASTCALL,
     "Validate and stamp one uncompressed v2 batch in place, or return None for the Python path."},
    {"walk_records", (PyCFunction)(void (*)(void))walk_records, METH_FASTCALL,
     "Walk a batch's (decompressed) records: (max timestamp, offsets in sequence), or None."},
    {"canonical_records", (PyCFunction)(void (*)(void))canonical_records, METH_FASTCALL,
     "Whether records are encoded exactly as a rebuild would encode them: the max timestamp's index, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, .m_name = "_validator_fast", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__validator_fast(void) {
    if ((crc32c_function = attribute_of("crc32c", "crc32c")) == NULL
            || (batch_header_type = tuple_type_of("franz.records.record_batch", "BatchHeader")) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
