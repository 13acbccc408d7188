"""The library's log lines reach logging.getLogger("depthmask")."""

from __future__ import annotations

import logging

import depthmask


def test_backend_line_reaches_logging(caplog):
    caplog.set_level(logging.INFO, logger="depthmask")
    with depthmask.Masker(overrides={"backend.kind": "cpu"}):
        pass
    lines = [r for r in caplog.records if r.name == "depthmask"]
    assert any("backend" in r.getMessage() for r in lines), [r.getMessage() for r in lines]
    assert all(r.levelno >= logging.INFO for r in lines)


def test_level_mapping():
    from depthmask import _log

    assert [_log._to_library(lv) for lv in (0, 5, logging.DEBUG, logging.INFO, logging.WARNING, 25, logging.ERROR,
                                            logging.CRITICAL, 100)] == [0, 0, 1, 2, 3, 3, 4, 5, 6]


def test_an_exception_in_logging_never_reaches_the_library(monkeypatch):
    from depthmask import _log

    class Exploding:
        def log(self, *args, **kwargs):
            raise RuntimeError("logging is broken")

    monkeypatch.setattr(_log, "logger", Exploding())
    with depthmask.Masker(overrides={"backend.kind": "cpu"}) as m:  # logs its backend line
        assert m.backend == "cpu"


def test_set_log_level_names():
    depthmask.set_log_level("warning")
    depthmask.set_log_level("INFO")
    try:
        depthmask.set_log_level("loud")
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown level name was accepted")


def test_the_library_has_the_log_callback():
    from depthmask import _native

    assert _native.has("dm_set_log_callback"), f"{_native.path} has no dm_set_log_callback: its lines go to stderr"
