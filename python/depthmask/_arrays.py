"""Array adapters: NumPy arrays, PyTorch tensors, CuPy arrays, and any object with
__cuda_array_interface__ (v3) or DLPack, read as dm_image descriptors over their own memory.

Nothing is copied. A View holds the producer (and, for DLPack, the capsule) alive until the call
returns; device work is enqueued on a stream, so the caller keeps the arrays alive until that stream
has run it, as with any CUDA library.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import POINTER, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

import numpy as np

from . import _native as n
from ._errors import InputError

# dm_dtype of the dtypes the library reads (native byte order only), with their names for messages.
_NUMPY_DTYPES = {
    np.dtype(np.uint8): n.DTYPE_UINT8,
    np.dtype(np.uint16): n.DTYPE_UINT16,
    np.dtype(np.float32): n.DTYPE_FLOAT32,
    np.dtype(np.bool_): n.DTYPE_BOOL,
}
_ITEMSIZE = {n.DTYPE_UINT8: 1, n.DTYPE_UINT16: 2, n.DTYPE_FLOAT32: 4, n.DTYPE_BOOL: 1}
DTYPE_NAMES = {n.DTYPE_UINT8: "uint8", n.DTYPE_UINT16: "uint16", n.DTYPE_FLOAT32: "float32", n.DTYPE_BOOL: "bool"}
# What each argument may be (Masker.mask's contract).
ALLOWED = {
    "depth": (n.DTYPE_UINT16, n.DTYPE_FLOAT32),
    "mask": (n.DTYPE_UINT8, n.DTYPE_UINT16, n.DTYPE_BOOL),
    "out": (n.DTYPE_FLOAT32,),
    "color": (n.DTYPE_UINT8,),
}
# How to get an acceptable array, by the array's library.
_COPY_HINT = {
    "numpy": "np.ascontiguousarray(a)",
    "torch": "t.contiguous()",
    "cupy": "cupy.ascontiguousarray(a)",
}


class View:
    """One array as the library sees it: pointer, shape, byte strides, dtype, where it lives."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "memory", "device", "read_only", "family", "stream", "keep")

    def __init__(self, ptr, shape, strides, dtype, memory, device, read_only, family, stream=None, keep=None):
        # shape and strides: tuples of Python ints (each adapter converts what its producer gives)
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.memory = memory
        self.device = device
        self.read_only = read_only
        self.family = family  # numpy | torch | cupy | cai | dlpack: who allocates outputs, whose stream
        self.stream = stream  # __cuda_array_interface__'s stream (None: no synchronisation asked)
        self.keep = keep  # objects that must outlive the call (a DLPack capsule, a converted array)

    @property
    def on_device(self) -> bool:
        return self.memory != n.MEMORY_HOST

    def image(self) -> n.DmImage:
        nd = len(self.shape)
        im = n.DmImage(self.ptr, self.memory, self.device, self.dtype, nd)
        shape, strides = im.shape, im.strides  # element by element: faster than converting tuples
        for i in range(nd):
            shape[i] = self.shape[i]
            strides[i] = self.strides[i]
        im.read_only = 1 if self.read_only else 0
        return im


def _torch():
    return sys.modules.get("torch")


def _cupy():
    return sys.modules.get("cupy")


def family_of(obj) -> str:
    """Which adapter reads obj (cheap: no protocol is called)."""
    if isinstance(obj, np.ndarray):
        return "numpy"
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        return "torch"
    cupy = _cupy()
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return "cupy"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cai"
    if hasattr(obj, "__dlpack__"):
        return "dlpack"
    return "numpy"


# --- NumPy -------------------------------------------------------------------------------------------


def _dtype_error(role: str, what) -> InputError:
    names = [DTYPE_NAMES[d] for d in ALLOWED[role]]
    allowed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
    return InputError(f"{role}: dtype {what} is not supported; {role} must be {allowed} (convert it first)")


def _numpy_view(a, role: str) -> View:
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # noqa: BLE001 - any failure to read it is the caller's bad input
            raise InputError(f"{role}: {type(a).__name__} is not an array ({e})") from None
    dt = _NUMPY_DTYPES.get(a.dtype)
    if dt is None:
        raise _dtype_error(role, a.dtype.str if a.dtype.byteorder == ">" else a.dtype)
    return View(a.ctypes.data, a.shape, a.strides, dt, n.MEMORY_HOST, -1, not a.flags.writeable, "numpy", keep=a)


# --- PyTorch -----------------------------------------------------------------------------------------


def _torch_dtypes(torch):
    table = {torch.uint8: n.DTYPE_UINT8, torch.float32: n.DTYPE_FLOAT32, torch.bool: n.DTYPE_BOOL}
    u16 = getattr(torch, "uint16", None)  # torch >= 2.3
    if u16 is not None:
        table[u16] = n.DTYPE_UINT16
    return table


def _torch_view(t, role: str) -> View:
    # The tensor's own attributes: the same pointer, shape and strides its __cuda_array_interface__ and
    # DLPack export would give, also for tensors that require grad (those protocols refuse them).
    torch = _torch()
    dt = _torch_dtypes(torch).get(t.dtype)
    if dt is None:
        if t.dtype == torch.int16 and role == "depth":
            raise InputError(f"{role}: dtype torch.int16 is not supported; {role} must be uint16 or float32 "
                             "(torch.uint16 exists from PyTorch 2.3: t.view(torch.uint16); or pass the NumPy array)")
        raise _dtype_error(role, t.dtype)
    itemsize = _ITEMSIZE[dt]
    strides = tuple(s * itemsize for s in t.stride())
    dev = t.device
    if dev.type == "cuda":
        memory, device = n.MEMORY_CUDA, dev.index if dev.index is not None else torch.cuda.current_device()
    elif dev.type == "cpu":
        memory, device = n.MEMORY_HOST, -1
    else:
        raise InputError(f"{role}: a tensor on device {dev} is not supported (CPU or CUDA only)")
    return View(t.data_ptr(), tuple(t.shape), strides, dt, memory, device, False, "torch", keep=t)


# --- __cuda_array_interface__ ------------------------------------------------------------------------

_TYPESTRS = {"|u1": n.DTYPE_UINT8, "<u2": n.DTYPE_UINT16, "<f4": n.DTYPE_FLOAT32, "|b1": n.DTYPE_BOOL}
if sys.byteorder == "big":  # pragma: no cover - no big-endian CUDA hosts
    _TYPESTRS = {}


def _cai_view(obj, role: str, family: str) -> View:
    cai = obj.__cuda_array_interface__
    ptr, ro = cai["data"]
    shape = tuple(int(x) for x in cai["shape"])
    dt = _TYPESTRS.get(cai["typestr"])
    if dt is None:
        raise _dtype_error(role, cai["typestr"])
    if cai.get("mask") is not None:
        raise InputError(f"{role}: masked arrays (__cuda_array_interface__ 'mask') are not supported")
    strides = cai.get("strides")
    strides = _c_strides(shape, _ITEMSIZE[dt]) if strides is None else tuple(int(x) for x in strides)
    # v3's stream: the stream the producer's work on this memory is ordered on (None: nothing to wait for).
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    dev = getattr(obj, "device", None)
    device = getattr(dev, "id", None)
    if device is None:
        device = -2  # not said by the protocol: resolved by the caller (the masker's device)
    return View(ptr or 0, shape, strides, dt, n.MEMORY_CUDA, int(device), bool(ro), family, stream, keep=obj)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for s in reversed(shape):
        strides.append(step)
        step *= max(int(s), 1)
    return tuple(reversed(strides))


# --- DLPack ------------------------------------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", _DLDevice),
        ("ndim", c_int32),
        ("dtype", _DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):  # capsule "dltensor" (DLPack < 1.0)
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):  # capsule "dltensor_versioned" (DLPack >= 1.0)
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_DLPACK_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DTYPES = {(1, 8): n.DTYPE_UINT8, (1, 16): n.DTYPE_UINT16, (2, 32): n.DTYPE_FLOAT32, (6, 8): n.DTYPE_BOOL}

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack_capsule(obj, stream):
    """obj.__dlpack__(), asking for a versioned capsule where the producer takes max_version."""
    kwargs = {} if stream is None else {"stream": stream}
    try:
        return obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:  # a producer from before DLPack 1.0 (PyTorch 1.x, NumPy 1.x)
        return obj.__dlpack__(**kwargs)


def dlpack_device(obj):
    """(device_type, device_id) from __dlpack_device__, or None."""
    fn = getattr(obj, "__dlpack_device__", None)
    if fn is None:
        return None
    dev_type, dev_id = fn()
    return int(dev_type), int(dev_id)


def _dlpack_view(obj, role: str, stream) -> View:
    dev = dlpack_device(obj)
    cuda_like = dev is not None and dev[0] in (_KDL_CUDA, _KDL_CUDA_MANAGED)
    # The consumer's stream lets the producer order its pending work before ours (DLPack: 1 is the
    # legacy default stream; 0 is not allowed). Host arrays take no stream.
    cap = _dlpack_capsule(obj, (stream or 1) if cuda_like else None)
    name = _capsule_name(cap)
    if name == b"dltensor_versioned":
        managed = _DLManagedTensorVersioned.from_address(_capsule_pointer(cap, name))
        if managed.version.major != 1:
            raise InputError(f"{role}: DLPack version {managed.version.major}.{managed.version.minor} is not supported (1.x)")
        t, read_only = managed.dl_tensor, bool(managed.flags & _DLPACK_READ_ONLY)
    elif name == b"dltensor":
        t, read_only = _DLManagedTensor.from_address(_capsule_pointer(cap, name)).dl_tensor, False
    else:
        raise InputError(f"{role}: __dlpack__ returned a capsule named {name!r}, not a DLPack tensor")
    key = (t.dtype.code, t.dtype.bits)
    dt = _DL_DTYPES.get(key) if t.dtype.lanes == 1 else None
    if dt is None:
        raise _dtype_error(role, f"DLPack (code {t.dtype.code}, bits {t.dtype.bits}, lanes {t.dtype.lanes})")
    nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    itemsize = _ITEMSIZE[dt]
    if t.strides:
        strides = tuple(t.strides[i] * itemsize for i in range(nd))
    else:
        strides = _c_strides(shape, itemsize)
    dev_type, dev_id = t.device.device_type, t.device.device_id
    if dev_type in (_KDL_CPU, _KDL_CUDA_HOST):
        memory, device = n.MEMORY_HOST, -1
    elif dev_type in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        memory, device = n.MEMORY_CUDA, dev_id
    else:
        raise InputError(f"{role}: DLPack device type {dev_type} is not supported (CPU or CUDA only)")
    ptr = (t.data or 0) + t.byte_offset
    # The capsule is read, not consumed: it stays alive (and owns the export) until the call returns.
    return View(ptr, shape, strides, dt, memory, device, read_only, "dlpack", keep=(obj, cap))


# --- one entry point ---------------------------------------------------------------------------------


def view_of(obj, role: str, stream=None, family: str | None = None) -> View:
    """The View of obj for argument `role` (depth, mask, out, color); `stream` is the consumer's
    stream handle, for DLPack producers."""
    family = family or family_of(obj)
    if family == "numpy":
        return _numpy_view(obj, role)
    if family == "torch":
        return _torch_view(obj, role)
    if family in ("cupy", "cai"):
        return _cai_view(obj, role, family)
    return _dlpack_view(obj, role, stream)


def check_layout(v: View, role: str) -> None:
    """The rules the C ABI states for dm_image, checked before the call so the message can say what
    to do: the argument's dtypes, ndim 2 or 3, no empty axis, pixel-aligned pointer, rows of
    contiguous pixels, positive strides that are multiples of the pixel size (an input's frame
    stride may be 0)."""
    if v.dtype not in ALLOWED[role]:
        raise _dtype_error(role, DTYPE_NAMES[v.dtype])
    shape, strides = v.shape, v.strides
    if role != "color" and (len(shape) == 2 or len(shape) == 3) and min(shape) > 0:
        # The common case in a few compares: aligned, contiguous rows, rows and frames apart.
        pix = _ITEMSIZE[v.dtype]
        row = strides[-2]
        if (strides[-1] == pix and row >= shape[-1] * pix and not row % pix and not v.ptr % pix
                and (len(shape) == 2 or (strides[0] >= shape[1] * row and not strides[0] % pix))):
            return
    _check_layout_slowly(v, role)


def _check_layout_slowly(v: View, role: str) -> None:
    """check_layout for the cases its fast path does not accept: says what is wrong, or normalises
    the strides of axes of length 1 (and accepts an input's frame stride of 0)."""
    hint = _COPY_HINT.get(v.family, "a C-contiguous copy")
    itemsize = 3 if role == "color" else _ITEMSIZE[v.dtype]
    nd = len(v.shape)
    want = (3,) if role == "color" else (2, 3)
    if nd not in want:
        what = "(rows, cols, 3)" if role == "color" else "(rows, cols) or a stack (frames, rows, cols)"
        raise InputError(f"{role}: shape {v.shape} has {nd} dimensions; {role} must be {what}")
    if 0 in v.shape:
        raise InputError(f"{role}: shape {v.shape} holds no pixels")
    pix = _ITEMSIZE[v.dtype]
    if v.ptr % pix:
        raise InputError(f"{role}: the data pointer is not aligned to {pix} bytes ({DTYPE_NAMES[v.dtype]}); "
                         f"pass an aligned copy (a.copy())")
    strides = list(v.strides)
    if role == "color":
        if v.shape[2] != 3 or strides[2] != 1 or (v.shape[1] > 1 and strides[1] != 3):
            raise InputError(f"{role}: shape {v.shape}, strides {v.strides}: color must be BGR uint8 (rows, cols, 3) "
                             f"with interleaved pixels (strides (row, 3, 1)); use {hint}")
        strides = strides[:2]
    # An axis of one element has no meaningful stride: producers write anything there.
    inner = itemsize
    for i in range(len(strides) - 1, -1, -1):
        if v.shape[i] == 1:
            strides[i] = inner
        inner = strides[i] * v.shape[i]
    if strides[-1] != itemsize:
        if strides[-1] < 0:
            why = "a negative column stride (a reversed view)"
        else:
            why = f"column stride {strides[-1]} bytes for {itemsize}-byte pixels (a column slice or transpose)"
        raise InputError(f"{role}: pixels of a row must be contiguous, got {why}; use {hint}")
    for i, s in enumerate(strides[:-1]):
        axis = "row" if i == len(strides) - 2 else "frame"
        if s < 0:
            raise InputError(f"{role}: a negative {axis} stride ({s} bytes: a reversed view) is not supported; use {hint}")
        if s % pix:
            raise InputError(f"{role}: the {axis} stride {s} bytes is not a multiple of the {pix}-byte pixel; use {hint}")
        if s == 0 and (axis == "row" or role == "out"):
            raise InputError(f"{role}: a {axis} stride of 0 (a broadcast view) is not supported for {'out' if role == 'out' else 'rows'}; use {hint}")
    if role == "out" and nd >= 2:
        rows_ok = strides[-2] >= v.shape[-1] * itemsize
        frames_ok = nd == 2 or strides[0] >= v.shape[1] * strides[1]
        if not (rows_ok and frames_ok):
            raise InputError(f"out: strides {v.strides} make pixels overlap; out must be a writable array of its own")
    v.strides = tuple(strides) + ((1,) if role == "color" else ())
