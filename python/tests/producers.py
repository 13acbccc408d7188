"""Array producers for the tests: DLPack capsules built by hand from the DLPack header (legacy
"dltensor" and versioned "dltensor_versioned"), an object claiming CUDA memory through
__cuda_array_interface__, and wrappers that offer only one protocol of a real array."""

from __future__ import annotations

import ctypes

import numpy as np


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Legacy(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _Versioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DL_CODES = {np.dtype(np.uint8): (1, 8), np.dtype(np.uint16): (1, 16), np.dtype(np.float32): (2, 32),
             np.dtype(np.bool_): (6, 8)}


class FakeDLPack:
    """A DLPack producer over a NumPy array, written from the DLPack header: legacy (no max_version
    argument, capsule "dltensor") or versioned, with an optional byte offset, strides or none
    (contiguous), a read-only flag and a device type."""

    def __init__(self, a, versioned, read_only=False, device_type=1, offset_by_byte_offset=False, null_strides=False):
        self.a, self.versioned, self.device_type = a, versioned, device_type
        base = a.__array_interface__["data"][0]
        self._shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        self._strides = (ctypes.c_int64 * a.ndim)(*[s // a.itemsize for s in a.strides])
        code, nbits = _DL_CODES[a.dtype]
        t = _DLTensor(base, _DLDevice(device_type, 0), a.ndim, _DLDataType(code, nbits, 1), self._shape,
                      None if null_strides else self._strides, 0)
        if offset_by_byte_offset:  # data at an earlier pointer, the offset in byte_offset
            t.data, t.byte_offset = base - 64, 64
        if versioned:
            self._managed = _Versioned(1, 0, None, None, 1 if read_only else 0, t)
            self._name = b"dltensor_versioned"
        else:
            self._managed = _Legacy(t, None, None)
            self._name = b"dltensor"
        self.calls = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def _capsule(self):
        return _capsule_new(ctypes.addressof(self._managed), self._name, None)


class FakeLegacy(FakeDLPack):
    def __dlpack__(self, stream=None):
        self.calls.append({"stream": stream})
        return self._capsule()


class FakeVersioned(FakeDLPack):
    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"stream": stream, "max_version": max_version})
        return self._capsule()


class FakeCAI:
    """An object that says it is CUDA memory (__cuda_array_interface__ v3) over a host array."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                                         "strides": None, "version": 3, "stream": None}


class OnlyDLPack:
    """A real array behind DLPack alone (no __cuda_array_interface__, not a known type)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class OnlyCAI:
    """A real device array behind __cuda_array_interface__ alone."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__
