"""ctypes declarations of the C ABI (lib/api/include/depthmask/depthmask_c.h) and finding the library.

The library is found, in order: the environment variable DEPTHMASK_LIBRARY (a full path; when set it
is the only candidate), the LIBRARY line of depthmask/_install.py (written by `cmake --install`),
libdepthmask.so.0 beside this package, then ctypes.util.find_library("depthmask"). LD_LIBRARY_PATH is
never set. ctypes.CDLL releases the GIL for the duration of each call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p

SONAME = "libdepthmask.so.0"
ABI_VERSION = 1  # DM_ABI_VERSION of the header this module mirrors

# enum dm_memory
MEMORY_HOST = 0
MEMORY_CUDA = 1
MEMORY_MAPPED = 2
# enum dm_dtype
DTYPE_UINT8 = 1
DTYPE_UINT16 = 2
DTYPE_FLOAT32 = 3
DTYPE_BOOL = 4


class DmImage(ctypes.Structure):
    """struct dm_image: one image (ndim 2) or a stack (ndim 3), strides in bytes."""

    _fields_ = [
        ("data", c_void_p),
        ("memory", c_int32),
        ("device", c_int32),
        ("dtype", c_int32),
        ("ndim", c_int32),
        ("shape", c_int64 * 3),
        ("strides", c_int64 * 3),
        ("read_only", c_int32),
        ("reserved", c_int32),
    ]


LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)  # dm_log_fn
PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint64)  # dm_progress_fn

_IMAGE_P = POINTER(DmImage)
_STRINGS = POINTER(c_char_p)

# name: (restype, argtypes), every function of the header.
_SIGNATURES = {
    "dm_version": (c_char_p, []),
    "dm_abi_version": (c_int, []),
    "dm_cuda_built": (c_int, []),
    "dm_last_error": (c_char_p, []),
    "dm_set_log_callback": (None, [LOG_FN, c_void_p, c_int]),
    "dm_masker_open": (c_int, [c_char_p, c_char_p, _STRINGS, c_size_t, POINTER(c_void_p)]),
    "dm_masker_close": (None, [c_void_p]),
    "dm_masker_backend": (c_char_p, [c_void_p]),
    "dm_masker_reason": (c_char_p, [c_void_p]),
    "dm_masker_device": (c_int, [c_void_p]),
    "dm_masker_config_yaml": (c_int, [c_void_p, POINTER(c_void_p)]),
    "dm_masker_mask": (c_int, [c_void_p, _IMAGE_P, _IMAGE_P, _IMAGE_P, _IMAGE_P, c_void_p]),
    "dm_masker_run": (
        c_int,
        [c_void_p, c_char_p, c_char_p, _STRINGS, c_size_t, PROGRESS_FN, c_void_p, POINTER(c_void_p)],
    ),
    "dm_masker_cancel": (None, [c_void_p]),
    "dm_doctor": (c_int, [c_char_p, c_char_p, c_char_p, _STRINGS, c_size_t, c_size_t, POINTER(c_void_p)]),
    "dm_string_free": (None, [c_void_p]),
}


def _candidates():
    """(where, path) pairs to try, in order."""
    env = os.environ.get("DEPTHMASK_LIBRARY")
    if env:
        yield "DEPTHMASK_LIBRARY", env
        return
    try:
        from . import _install  # written by `cmake --install` (python/CMakeLists.txt)
    except ImportError:
        pass
    else:
        yield "depthmask/_install.py", _install.LIBRARY
    yield "beside the package", os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)
    found = ctypes.util.find_library("depthmask")
    yield "ctypes.util.find_library('depthmask')", found


def _load() -> ctypes.CDLL:
    tried = []
    for where, path in _candidates():
        if not path:
            tried.append(f"{where}: not found")
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{where}: {path} does not exist")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{where}: {path}: {e}")
    raise ImportError(
        "depthmask: cannot load the library " + SONAME + "; tried " + "; ".join(tried) + ". Install it "
        "(cmake --install with DEPTHMASK_PYTHON_DIR, docs/PYTHON.md) or set DEPTHMASK_LIBRARY to its full path."
    )


# Functions the package can do without: a library built before the log callback existed still masks
# (its log lines go to stderr, and test_logging.py fails to say so).
_OPTIONAL = {"dm_set_log_callback"}


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            if name in _OPTIONAL:
                continue
            raise ImportError(f"depthmask: {lib._name} has no {name}: not a depthmask library of ABI {ABI_VERSION}") from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _declare(_load())
path = lib._name  # the file that was loaded


def has(name: str) -> bool:
    """Whether the library exports `name` (one of the optional functions)."""
    return hasattr(lib, name)


def last_error() -> str:
    """dm_last_error() of this thread, decoded."""
    msg = lib.dm_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def take_string(ptr: c_void_p) -> str:
    """A string the library returned through a char** (freed here with dm_string_free)."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib.dm_string_free(ptr)


def string_array(items: list[str]):
    """(char* const*, n) for the override arrays; the array keeps its bytes alive."""
    n = len(items)
    arr = (c_char_p * max(n, 1))(*[s.encode("utf-8") for s in items])
    return arr, n
