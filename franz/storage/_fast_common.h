/*
 * What franz/storage's three C modules (_validator_fast.c, _segment_fast.c,
 * _unified_log_fast.c) share: big-endian field access, int conversion, and the module-init
 * steps that fetch names and types from franz's Python modules. Include after Python.h.
 */
#ifndef FRANZ_STORAGE_FAST_COMMON_H
#define FRANZ_STORAGE_FAST_COMMON_H

#include <stdint.h>

#include "structmember.h"  /* T_OBJECT_EX, READONLY: how __slots__ members are described */

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

/* An attribute the C append path reads or writes, at its __slots__ offset.
 *
 * The classes on that path (UnifiedLog, LocalLog, LogSegments, LogSegment, FileRecords,
 * the indexes, the epoch cache, the producer state, LogConfig) keep the attributes these
 * modules touch in __slots__. A slot sits at a fixed offset in the object, so reading one
 * is a load, where PyObject_GetAttr costs a type-cache probe and a dict lookup: ~40 of
 * those were ~10k of an append's ~76k instructions and a larger share of its time, each
 * slower in place than in a warm loop because the append's 16 KiB write evicts the memory
 * it touches (docs/TEAM_NOTES.md).
 *
 * A SlotAttr binds to the type of the object it last met. Objects of that exact type are
 * read and written at the slot; an unset slot, or a type that keeps the name anywhere but
 * in a slot of its own layout (a __dict__, a property), goes through
 * PyObject_GetAttr/SetAttr, so the result is the same either way. One SlotAttr per
 * (class, attribute) keeps each bound to one type; `class_name` names that class, for
 * tests/storage/test_fast_common.py, which checks the slot is there. Classes are not
 * patched at run time: a descriptor put over a slot after binding would be bypassed. */
typedef struct {
    const char *class_name;
    const char *name;
    PyObject *interned;
    PyTypeObject *type;  /* the bound type (a strong reference), NULL until the first object */
    Py_ssize_t offset;   /* the slot's offset in objects of `type`; 0: the generic path */
    int settable;        /* `type` sets attributes generically (no __setattr__ of its own) */
} SlotAttr;

#define SLOT_ATTR(class_name, attribute_name) {(class_name), (attribute_name), NULL, NULL, 0, 0}

/* Interns every attribute name of a NULL-terminated list: 0, or -1 with an exception set. */
static inline int slot_attrs_init(SlotAttr *const *attrs) {
    for (; *attrs != NULL; attrs++)
        if (((*attrs)->interned = PyUnicode_InternFromString((*attrs)->name)) == NULL) return -1;
    return 0;
}

/* [(class_name, attribute_name), ...] of a NULL-terminated list: a new list, or NULL. */
static inline PyObject *slot_attrs_list(SlotAttr *const *attrs) {
    PyObject *list = PyList_New(0);
    for (; list != NULL && *attrs != NULL; attrs++) {
        PyObject *pair = Py_BuildValue("(ss)", (*attrs)->class_name, (*attrs)->name);
        if (pair == NULL || PyList_Append(list, pair) < 0) Py_CLEAR(list);
        Py_XDECREF(pair);
    }
    return list;
}

/* A module's slot_attributes() over its NULL-terminated `table`, and that function's entry
 * for the module's method table. */
#define SLOT_ATTRIBUTES_FUNCTION(table)                                    \
    static PyObject *slot_attributes(PyObject *module, PyObject *unused) { \
        (void)module, (void)unused;                                        \
        return slot_attrs_list(table);                                     \
    }
#define SLOT_ATTRIBUTES_METHOD                              \
    {"slot_attributes", slot_attributes, METH_NOARGS,       \
     "[(class name, attribute name)] of every attribute this module reads or writes at its slot."}

static inline void slot_attr_bind(SlotAttr *attr, PyTypeObject *type) {
    Py_XSETREF(attr->type, (PyTypeObject *)Py_NewRef((PyObject *)type));
    attr->offset = 0;
    attr->settable = type->tp_setattro == PyObject_GenericSetAttr;
    if (type->tp_getattro != PyObject_GenericGetAttr) return;  /* a __getattribute__ of its own decides */
    PyObject *descriptor = _PyType_Lookup(type, attr->interned);  /* borrowed; what GetAttr would find first */
    if (descriptor != NULL && Py_TYPE(descriptor) == &PyMemberDescr_Type) {
        PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) attr->offset = member->offset;
    }
}

/* The slot of `attr` in `object`, or NULL when the generic path must be taken. */
static inline PyObject **slot_in(PyObject *object, SlotAttr *attr) {
    PyTypeObject *type = Py_TYPE(object);
    if (type != attr->type) slot_attr_bind(attr, type);
    if (attr->offset == 0) return NULL;
    return (PyObject **)((char *)object + attr->offset);
}

/* object.<attr>: a new reference, or NULL with an exception set (AttributeError when unset). */
static inline PyObject *get_attr(PyObject *object, SlotAttr *attr) {
    PyObject **slot = slot_in(object, attr);
    if (slot != NULL && *slot != NULL) return Py_NewRef(*slot);
    return PyObject_GetAttr(object, attr->interned);
}

/* object.<attr> = value: 0, or -1 with an exception set. */
static inline int set_attr(PyObject *object, SlotAttr *attr, PyObject *value) {
    PyObject **slot = slot_in(object, attr);
    if (slot == NULL || !attr->settable) return PyObject_SetAttr(object, attr->interned, value);
    PyObject *old = *slot;
    *slot = Py_NewRef(value);
    Py_XDECREF(old);
    return 0;
}

#endif
