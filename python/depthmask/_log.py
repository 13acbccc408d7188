"""The library's log lines, forwarded to logging.getLogger("depthmask").

The callback may run on any of the library's threads; it never lets an exception reach C.
"""

from __future__ import annotations

import atexit
import logging

from . import _native as n

logger = logging.getLogger("depthmask")

TRACE = 5  # the library's trace level, below logging.DEBUG (no name is registered: logging stays as it is)
# The library's levels (0 trace .. 5 critical, 6 off) as logging levels.
_TO_PYTHON = {0: TRACE, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR, 5: logging.CRITICAL}


def _to_library(level: int) -> int:
    """The library's min level for a logging level: the lowest library level logging would show."""
    for lib_level, py_level in sorted(_TO_PYTHON.items()):
        if py_level >= level:
            return lib_level
    return 6


def _forward(_user, level, message):
    try:
        logger.log(_TO_PYTHON.get(level, logging.ERROR), "%s", message.decode("utf-8", "replace") if message else "")
    except BaseException:  # noqa: BLE001 - nothing may unwind into the library's thread
        pass


_callback = n.LOG_FN(_forward)  # module-level: the library holds this pointer for the process's life


def set_log_level(level: int | str) -> None:
    """The lowest level the library sends to the "depthmask" logger (a logging level or its name;
    default logging.INFO). The logger's own level and handlers still decide what is shown."""
    if isinstance(level, str):
        named = logging.getLevelName(level.upper())
        if not isinstance(named, int):
            raise ValueError(f"unknown log level {level!r}")
        level = named
    if n.has("dm_set_log_callback"):
        n.lib.dm_set_log_callback(_callback, None, _to_library(int(level)))


def _detach() -> None:
    # At interpreter exit: back to stderr before the callback's Python objects go away.
    n.lib.dm_set_log_callback(n.LOG_FN(), None, 2)  # a null dm_log_fn: stderr


def install() -> None:
    """At import: the library logs through logging, at INFO and above (the CLI's default), or lower
    when the "depthmask" logger is already set lower."""
    if not n.has("dm_set_log_callback"):
        logger.warning("%s has no dm_set_log_callback: its log lines go to stderr, not to logging", n.path)
        return
    set_log_level(min(logger.getEffectiveLevel(), logging.INFO))
    atexit.register(_detach)
