/*
 * What franz/storage's three C modules (_validator_fast.c, _segment_fast.c,
 * _unified_log_fast.c) share: big-endian field access, int conversion, and the module-init
 * steps that fetch names and types from franz's Python modules. Include after Python.h.
 */
#ifndef FRANZ_STORAGE_FAST_COMMON_H
#define FRANZ_STORAGE_FAST_COMMON_H

#include <stdint.h>

static inline int64_t read_i64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return (int64_t)v;
}

static inline int32_t read_i32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

static inline int16_t read_i16(const uint8_t *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }

static inline void write_i64(uint8_t *p, int64_t value) {
    uint64_t v = (uint64_t)value;
    for (int i = 7; i >= 0; i--) { p[i] = (uint8_t)v; v >>= 8; }
}

static inline void write_i32(uint8_t *p, int32_t value) {
    uint32_t v = (uint32_t)value;
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* PyLong_AsLongLong without its slow path for values past one 30-bit digit (most offsets
 * and timestamps), which goes through _PyLong_AsByteArray. */
static inline long long as_i64(PyObject *value) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow) PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long long");
    return v;
}

/* An interned attribute name in *slot: 0, or -1 with an exception set. */
static inline int intern(PyObject **slot, const char *name) {
    *slot = PyUnicode_InternFromString(name);
    return *slot == NULL ? -1 : 0;
}

/* module_name.name, imported: a new reference, or NULL with an exception set. */
static inline PyObject *attribute_of(const char *module_name, const char *name) {
    PyObject *module = PyImport_ImportModule(module_name);
    if (module == NULL) return NULL;
    PyObject *value = PyObject_GetAttrString(module, name);
    Py_DECREF(module);
    return value;
}

/* module_name.name, which must be a tuple subclass (a NamedTuple the C builds with
 * tp_alloc and PyTuple_SET_ITEM): a new reference, or NULL with an exception set. */
static inline PyTypeObject *tuple_type_of(const char *module_name, const char *name) {
    PyObject *type = attribute_of(module_name, name);
    if (type == NULL) return NULL;
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s must be a tuple subclass", module_name, name);
        Py_DECREF(type);
        return NULL;
    }
    return (PyTypeObject *)type;
}

#endif
