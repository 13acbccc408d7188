"""depthmask.Masker and depthmask.run over the C ABI."""

from __future__ import annotations

import ctypes
import json
import math
import os
import threading
from collections.abc import Mapping

from . import _device
from . import _native as n
from ._arrays import View, check_layout, family_of, view_of
from ._errors import InputError, error_for


def _config_source(config):
    """(path, yaml) for dm_masker_open: a path-like or the name of an existing file is a file, a
    mapping is written as YAML flow text (JSON, with YAML's .nan / .inf), any other string is YAML text."""
    if config is None:
        return None, None
    if isinstance(config, Mapping):
        return None, yaml_flow(config).encode("utf-8")
    if isinstance(config, os.PathLike):
        return os.fsencode(config), None
    if isinstance(config, str):
        looks_like_file = "\n" not in config and config.endswith((".yaml", ".yml", ".json"))
        if looks_like_file or (len(config) < 4096 and "\n" not in config and os.path.isfile(config)):
            return os.fsencode(config), None
        return None, config.encode("utf-8")
    raise TypeError(f"config: expected None, a path, YAML text or a dict, got {type(config).__name__}")


def yaml_flow(value) -> str:
    """A value as YAML flow text: JSON's spelling, except NaN and infinities (.nan, .inf, -.inf),
    which JSON cannot write and YAML reads only so."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        return repr(value) if math.isfinite(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {yaml_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a YAML double-quoted scalar
    if hasattr(value, "item"):  # a NumPy scalar
        return yaml_flow(value.item())
    return json.dumps(str(value))


def _override_value(value) -> str:
    # A plain string is the CLI's --set text as it is (a YAML scalar); everything else is spelled.
    return value if isinstance(value, str) else yaml_flow(value)


def _overrides(overrides) -> list[str]:
    """`key=value` strings from a mapping of dotted keys (or from an iterable of such strings)."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_override_value(v)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def _raise_last(status: int):
    raise error_for(status, n.last_error())


class Masker:
    """The library's masker: one configuration, one backend, usable from several threads at once.

    ``config``: None (the defaults), a path (str or os.PathLike) of a YAML file, YAML text, or a
    nested dict. ``overrides``: dotted keys and values applied last, as the CLI's --set
    (``{"backend.kind": "cpu", "mask.labels": [1, 2]}``).
    """

    def __init__(self, config=None, overrides=None) -> None:
        self._handle = None
        path, yaml = _config_source(config)
        arr, count = n.string_array(_overrides(overrides))
        handle = ctypes.c_void_p()
        status = n.lib.dm_masker_open(path, yaml, arr, count, ctypes.byref(handle))
        if status != 0:
            _raise_last(status)
        self._handle = handle.value
        self._busy = 0
        self._runs = 0
        self._closing = False
        self._cv = threading.Condition()
        self._backend = n.lib.dm_masker_backend(self._handle).decode()
        self._reason = n.lib.dm_masker_reason(self._handle).decode()
        self._device = int(n.lib.dm_masker_device(self._handle))

    # --- lifetime: calls in flight hold the handle; close() waits for them ---

    def _enter(self, run: bool = False) -> int:
        with self._cv:
            if self._handle is None or self._closing:
                raise InputError("this Masker is closed")
            self._busy += 1
            self._runs += run
            return self._handle

    def _leave(self, run: bool = False) -> None:
        with self._cv:
            self._busy -= 1
            self._runs -= run
            if self._busy == 0:
                self._cv.notify_all()

    def close(self) -> None:
        """Releases the backend. A run in progress is cancelled; close waits for calls in flight."""
        cv = getattr(self, "_cv", None)
        if cv is None:  # __init__ failed
            return
        with cv:
            if self._handle is None or self._closing:
                return
            self._closing = True
            if self._runs:
                n.lib.dm_masker_cancel(self._handle)
            while self._busy:
                cv.wait()
            handle, self._handle = self._handle, None
        n.lib.dm_masker_close(handle)

    def __enter__(self) -> Masker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never from a finaliser
            pass

    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def backend(self) -> str:
        """The backend in use: cpu, copy, zero_copy or managed."""
        return self._backend

    @property
    def reason(self) -> str:
        """Why the backend was chosen (auto's reason)."""
        return self._reason

    @property
    def device(self) -> int:
        """The CUDA device of a GPU backend, -1 for cpu."""
        return self._device

    @property
    def config_yaml(self) -> str:
        """The configuration in effect, as YAML."""
        handle = self._enter()
        try:
            text = ctypes.c_void_p()
            status = n.lib.dm_masker_config_yaml(handle, ctypes.byref(text))
            if status != 0:
                _raise_last(status)
            return n.take_string(text)
        finally:
            self._leave()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"backend={self._backend!r}, device={self._device}"
        return f"<depthmask.Masker {state}>"

    # --- masking ---

    def mask(self, depth, mask, color=None, out=None, stream=None):
        """Masks depth (uint16 raw units or float32 metres; (rows, cols) or (frames, rows, cols)) by
        mask (uint8, uint16 or bool; depth's shape, or one (rows, cols) image for a stack) into float32
        metres: ``out`` when given (and returned), else a new array of depth's library and device.

        Host arrays: returns when the result is written. Device arrays (a GPU backend on their
        device): enqueued on ``stream`` (default: the array library's current stream) and returns
        at once."""
        handle = self._enter()
        try:
            return self._mask(handle, depth, mask, color, out, stream)
        finally:
            self._leave()

    def _mask(self, handle, depth, mask, color, out, stream):
        family = family_of(depth)
        stream_handle = None if stream is None else _device.stream_handle(stream)
        # A DLPack producer is given the stream at export, to order its pending work before ours.
        dv = view_of(depth, "depth", stream_handle or 0, family)
        if not dv.on_device:
            stream_handle = None
        else:
            if dv.device == -2:  # __cuda_array_interface__ does not say the device
                dv.device = self._device
            if stream_handle is None:
                stream_handle = _device.default_stream(dv)
        mv = view_of(mask, "mask", stream_handle)
        for v, role in ((dv, "depth"), (mv, "mask")):
            check_layout(v, role)
        _check_shapes(dv, mv)
        cv = None
        if color is not None:
            cv = view_of(color, "color", stream_handle)
            check_layout(cv, "color")
            if len(dv.shape) != 2 or cv.shape[:2] != dv.shape:
                raise InputError(f"color: shape {cv.shape} does not match depth {dv.shape}; "
                                 "color is one (rows, cols, 3) image of a single depth frame")
        result = _device.empty_out(dv, stream_handle) if out is None else out
        ov = view_of(result, "out", stream_handle)
        check_layout(ov, "out")
        if ov.read_only:
            raise InputError("out: the array is read-only; pass a writable float32 array")
        if ov.shape != dv.shape:
            raise InputError(f"out: shape {ov.shape} does not match depth {dv.shape}")
        for v in (mv, ov, cv):
            if v is not None and v.on_device and v.device == -2:
                v.device = dv.device if dv.on_device else self._device
        for v in (dv, mv, ov):
            if v.on_device:
                _device.order_after(v, stream_handle or 0)
        images = [dv.image(), mv.image(), ov.image()]
        color_image = ctypes.byref(cv.image()) if cv is not None else None
        status = n.lib.dm_masker_mask(handle, ctypes.byref(images[0]), ctypes.byref(images[1]), color_image,
                                      ctypes.byref(images[2]), stream_handle or None)
        if status != 0:
            _raise_last(status)
        return result

    # --- the batch job ---

    def cancel(self) -> None:
        """Stops the run in progress on this masker (frames in flight finish; its summary says
        interrupted), or its next run when none is in progress."""
        handle = self._enter()
        try:
            n.lib.dm_masker_cancel(handle)
        finally:
            self._leave()

    def run(self, input=None, output=None, progress=None, overrides=None) -> dict:
        """The CLI's ``depthmask run`` over a folder: input.root = ``input`` and output.dir = ``output``
        (None: the configuration's), then ``overrides``. Runs on a worker thread; ``progress(done,
        total)``, when given, is called on the calling thread as frames are committed and once with
        the final counts. Returns the summary (a dict: total, ok, failed, failures, ...), also when
        frames failed or the run was cancelled by Masker.cancel(). An exception from ``progress`` or
        a KeyboardInterrupt cancels the run, waits for it to wind down and is re-raised. Errors before
        any frame is masked (no frames listed, output folder not writable) raise."""
        inp = None if input is None else os.fsencode(input)
        outp = None if output is None else os.fsencode(output)
        arr, count = n.string_array(_overrides(overrides))
        latest = [None]

        def on_progress(_user, done, total):
            latest[0] = (int(done), int(total))  # one store: nothing here can raise into C

        callback = n.PROGRESS_FN(on_progress)
        result = {}
        handle = self._enter(run=True)
        # Set when the C run has returned and the masker is released: what the waits below wait for
        # (Thread.is_alive() can turn false before the thread's target has finished unwinding).
        ended = threading.Event()

        def work():
            try:
                summary = ctypes.c_void_p()
                status = n.lib.dm_masker_run(handle, inp, outp, arr, count, callback, None, ctypes.byref(summary))
                result["finished"] = True
                result["status"] = status
                result["message"] = n.last_error() if status != 0 else ""
                result["summary"] = n.take_string(summary)
            finally:
                self._leave(run=True)
                ended.set()

        worker = threading.Thread(target=work, name="depthmask-run", daemon=True)
        worker.start()
        shown = None
        try:
            while not ended.wait(0.05):
                now = latest[0]
                if progress is not None and now is not None and now != shown:
                    shown = now
                    progress(*now)
        except BaseException:
            if not result.get("finished"):
                n.lib.dm_masker_cancel(handle)
            while not ended.is_set():
                try:
                    ended.wait(0.05)
                except KeyboardInterrupt:  # a second Ctrl-C: frames in flight are finishing
                    pass
            raise
        now = latest[0]
        if progress is not None and now is not None and now != shown:
            progress(*now)
        return _summary(result)


def _check_shapes(dv: View, mv: View) -> None:
    if mv.shape == dv.shape or (len(dv.shape) == 3 and mv.shape == dv.shape[1:]):
        return
    if len(dv.shape) == 3:
        raise InputError(f"mask: shape {mv.shape} does not match depth {dv.shape}; a stack's mask is "
                         f"{dv.shape} or one {dv.shape[1:]} image for every frame")
    raise InputError(f"mask: shape {mv.shape} does not match depth {dv.shape}")


def _summary(result: dict) -> dict:
    """The run's summary; a run that ended without one (an error before it began) raises."""
    text = result.get("summary", "")
    status = result.get("status", 0)
    if not text:
        if status != 0:
            raise error_for(status, result.get("message", ""))
        return {}
    return json.loads(text)


def run(config=None, input=None, output=None, progress=None, overrides=None) -> dict:
    """Opens a Masker on ``config`` and ``overrides`` and runs the batch job (Masker.run) over
    ``input`` into ``output``; returns the summary."""
    with Masker(config, overrides) as masker:
        return masker.run(input, output, progress)


def doctor(config=None, input=None, overrides=None, sample: int = 64) -> dict:
    """The CLI's ``depthmask doctor`` (docs/DOCTOR.md): checks the dataset at ``input`` (None: the
    configuration's input.root) under ``config`` and ``overrides``, decoding at most ``sample`` frames.
    Returns the report (a dict: layout, frames, checks, suggested, exit_code, ...); a configuration
    error raises ConfigError."""
    path, text = _config_source(config)
    inp = None if input is None else os.fsencode(input)
    arr, count = n.string_array(_overrides(overrides))
    report = ctypes.c_void_p()
    status = n.lib.dm_doctor(path, text, inp, arr, count, int(sample), ctypes.byref(report))
    if status != 0:
        _raise_last(status)
    return json.loads(n.take_string(report))
