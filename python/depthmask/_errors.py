"""The exceptions of depthmask: one class per status code of the C ABI (depthmask_c.h)."""

from __future__ import annotations

# Status codes (enum dm_status).
OK = 0
ERROR_INPUT = 1
ERROR_CONFIG = 2
ERROR_PLATFORM = 3
ERROR_RESOURCE = 4
ERROR_BUSY = 5
ERROR_INTERNAL = 70
ERROR_INTERRUPTED = 130


class Error(Exception):
    """Base of every depthmask error: ``status`` is the C ABI's status code (the CLI's exit code),
    ``message`` the library's message (``dm_last_error()``) or the package's own."""

    status: int = ERROR_INTERNAL

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InputError(Error, ValueError):
    """A bad input: an array (dtype, shape, strides, alignment, read-only out) or a file."""

    status = ERROR_INPUT


class ConfigError(Error, ValueError):
    """A bad configuration key or value, or a call the configuration cannot serve (device memory on
    the cpu backend)."""

    status = ERROR_CONFIG


class PlatformError(Error, RuntimeError):
    """The backend cannot run here (no GPU, a CUDA error)."""

    status = ERROR_PLATFORM


class ResourceError(Error, RuntimeError):
    """Out of memory, disk full, an output folder gone."""

    status = ERROR_RESOURCE


class ShardBusyError(Error, RuntimeError):
    """Another process runs the same shard (run.shard) of the same output folder: it does the work."""

    status = ERROR_BUSY


class InternalError(Error, RuntimeError):
    """A bug in depthmask: please report the message."""

    status = ERROR_INTERNAL


class Interrupted(Error):
    """A run was cancelled (Masker.cancel). Not the builtin InterruptedError (an OSError for EINTR)."""

    status = ERROR_INTERRUPTED


_BY_STATUS = {cls.status: cls for cls in (InputError, ConfigError, PlatformError, ResourceError, ShardBusyError, InternalError, Interrupted)
}


def error_for(status: int, message: str) -> Error:
    """The exception of a failed call's status; an unknown status is an InternalError that keeps it."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        return InternalError(f"{message} (unknown status {status})" if message else f"unknown status {status}", status)
    return cls(message or f"failed with status {status}")
