"""Streams and output allocation for device arrays, through the array's own library (PyTorch or
CuPy): this package links no CUDA library of its own."""

from __future__ import annotations

import sys

import numpy as np

from ._arrays import View
from ._errors import InputError

_LEGACY = 1  # cudaStreamLegacy; the NULL stream is the same stream in a library built without per-thread default streams


def stream_handle(stream) -> int:
    """A cudaStream_t from what the caller passed: an int, a torch.cuda.Stream (.cuda_stream) or a
    cupy.cuda.Stream (.ptr)."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise InputError(f"stream: {type(stream).__name__} is not a CUDA stream; pass an int (cudaStream_t), "
                     "a torch.cuda.Stream or a cupy.cuda.Stream")


def default_stream(v: View) -> int:
    """The stream a device call runs on when the caller names none: the current stream of the array's
    library on its device, or the stream its __cuda_array_interface__ names, else the default stream."""
    if v.family == "torch":
        return sys.modules["torch"].cuda.current_stream(v.device).cuda_stream
    if v.family == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(v.device):
            return cupy.cuda.get_current_stream().ptr
    if v.stream is not None:
        return int(v.stream)
    return 0


def _same_stream(a: int, b: int) -> bool:
    return a == b or {a, b} <= {0, _LEGACY}


def order_after(v: View, stream: int) -> None:
    """Makes `stream` wait for the work the producer's __cuda_array_interface__ stream holds on v's
    memory (CAI v3: the consumer synchronises), with an event of whichever of CuPy or PyTorch is loaded."""
    if v.stream is None or _same_stream(int(v.stream), stream):
        return
    cupy, torch = sys.modules.get("cupy"), sys.modules.get("torch")
    if cupy is not None:
        with cupy.cuda.Device(v.device):
            event = cupy.cuda.Event(disable_timing=True)
            event.record(cupy.cuda.ExternalStream(int(v.stream)))
            cupy.cuda.ExternalStream(stream).wait_event(event)
    elif torch is not None:
        event = torch.cuda.Event()
        event.record(torch.cuda.ExternalStream(int(v.stream), device=v.device))
        torch.cuda.ExternalStream(stream, device=v.device).wait_event(event)
    else:
        raise InputError(f"the array's __cuda_array_interface__ names stream {v.stream:#x} and the call runs on "
                         f"{stream:#x}; with neither CuPy nor PyTorch loaded to order them, pass stream={v.stream:#x}")


def empty_out(v: View, stream: int | None):
    """A float32 array of v's shape where v lives, from v's library (NumPy for other host arrays)."""
    family = v.family
    if family == "torch":
        torch = sys.modules["torch"]
        if not v.on_device:
            return torch.empty(v.shape, dtype=torch.float32)
    elif not v.on_device:
        return np.empty(v.shape, np.float32)
    elif family != "cupy":  # another producer: whichever device library is loaded
        family = "cupy" if "cupy" in sys.modules else "torch" if "torch" in sys.modules else None
    if family == "torch":
        torch = sys.modules["torch"]
        out = torch.empty(v.shape, dtype=torch.float32, device=torch.device("cuda", v.device))
        if stream is not None and not _same_stream(stream, torch.cuda.current_stream(v.device).cuda_stream):
            # Allocated for the current stream, written on another: keep the caching allocator from
            # handing the memory out again before that stream is done with it.
            out.record_stream(torch.cuda.ExternalStream(stream, device=v.device))
        return out
    if family == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(v.device):
            return cupy.empty(v.shape, dtype=cupy.float32)
    raise InputError("out: cannot allocate device memory without PyTorch or CuPy loaded; pass out=")
