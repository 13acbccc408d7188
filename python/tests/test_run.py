"""depthmask.run and Masker.run: the batch job, its summary, progress on the calling thread,
cancellation by an exception, errors before the run."""

from __future__ import annotations

import shutil
import subprocess
import threading

import numpy as np
import pytest

import depthmask
from depthmask import _native

CPU = {"backend.kind": "cpu"}


@pytest.fixture
def sample_config(sample):
    return sample / "depthmask.yaml"


def test_run_sample(sample_config, tmp_path):
    calls = []
    summary = depthmask.run(sample_config, output=tmp_path, overrides=CPU,
                            progress=lambda done, total: calls.append((threading.get_ident(), done, total)))
    assert summary["total"] == 8 and summary["ok"] == 8 and summary["failed"] == 0
    assert summary["exit_code"] == 0 and summary["interrupted"] is False
    assert summary.get("backend") == "cpu"
    assert len(list(tmp_path.glob("*.tiff"))) == 8
    assert calls, "progress was never called"
    assert {c[0] for c in calls} == {threading.get_ident()}, "progress ran on another thread"
    assert calls[-1][1:] == (8, 8)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)


def test_run_input_argument_and_run_overrides(sample, tmp_path):
    with depthmask.Masker(sample / "depthmask.yaml", overrides=CPU) as m:
        summary = m.run(input=sample, output=tmp_path, overrides={"output.format": "npy", "output.preview": False})
    assert summary["ok"] == 8
    assert len(list(tmp_path.glob("*.npy"))) == 8 and not list(tmp_path.glob("*.tiff"))
    assert np.load(next(tmp_path.glob("*.npy"))).dtype == np.float32


def test_failed_frames_are_in_the_summary(sample, tmp_path):
    data = tmp_path / "in"
    shutil.copytree(sample, data)
    (data / "depth" / "000003.png").write_bytes(b"not a png")
    summary = depthmask.run(data / "depthmask.yaml", output=tmp_path / "out", overrides=CPU)
    assert summary["ok"] == 7 and summary["failed"] == 1
    assert summary["exit_code"] == depthmask.InputError.status
    assert any("000003" in str(f) for f in summary["failures"])


def test_errors_before_the_run_raise(sample_config, tmp_path):
    with pytest.raises(depthmask.InputError):
        depthmask.run(sample_config, input=tmp_path / "missing", output=tmp_path / "out", overrides=CPU)
    blocker = tmp_path / "file"
    blocker.write_text("a file where the output folder should be")
    with pytest.raises(depthmask.Error):
        depthmask.run(sample_config, output=blocker, overrides=CPU)


class Stop(Exception):
    pass


def _raise_at_first(done, total):
    raise Stop(f"stopped at {done}/{total}")


def test_progress_exception_is_reraised(sample_config, tmp_path):
    with pytest.raises(Stop, match="stopped at"):
        depthmask.run(sample_config, output=tmp_path, overrides=CPU, progress=_raise_at_first)


def test_keyboard_interrupt_is_reraised(sample_config, tmp_path):
    def interrupt(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        depthmask.run(sample_config, output=tmp_path, overrides=CPU, progress=interrupt)


@pytest.fixture(scope="module")
def big_dataset(cli, tmp_path_factory):
    """Enough frames that a run is still going when the first progress call cancels it."""
    root = tmp_path_factory.mktemp("synth")
    subprocess.run([cli, "synth", "-o", str(root), "-n", "16", "-s", "1280x720"], check=True, capture_output=True)
    return root


def test_progress_exception_cancels(big_dataset, tmp_path, monkeypatch):
    cancels = []
    real = _native.lib.dm_masker_cancel
    monkeypatch.setattr(_native.lib, "dm_masker_cancel", lambda h: (cancels.append(h), real(h)))
    with depthmask.Masker(big_dataset / "depthmask.yaml", overrides={**CPU, "run.frames_in_flight": 1}) as m:
        with pytest.raises(Stop):
            m.run(output=tmp_path, progress=_raise_at_first)
        assert len(cancels) == 1
        assert len(list(tmp_path.glob("*.tiff"))) < 16
        # The cancel ended that run only: the next run on this Masker resumes and completes.
        summary = m.run(output=tmp_path)
    assert summary["interrupted"] is False
    assert summary["ok"] + summary["skipped_done"] == 16


def test_cancel_from_another_thread_returns_the_summary(big_dataset, tmp_path):
    with depthmask.Masker(big_dataset / "depthmask.yaml", overrides={**CPU, "run.frames_in_flight": 1}) as m:
        started = threading.Event()
        timer = threading.Thread(target=lambda: (started.wait(), m.cancel()))
        timer.start()
        summary = m.run(output=tmp_path, progress=lambda d, t: started.set())
        timer.join()
    assert summary["interrupted"] is True
    assert summary["exit_code"] == depthmask.Interrupted.status
    assert summary["ok"] < 16


def test_ctrl_c_while_waiting_cancels(big_dataset, tmp_path):
    # A real SIGINT while the calling thread waits for the worker: cancel, wind down, re-raise.
    import os
    import signal

    with depthmask.Masker(big_dataset / "depthmask.yaml", overrides={**CPU, "run.frames_in_flight": 1}) as m:
        started = threading.Event()
        timer = threading.Thread(target=lambda: (started.wait(), os.kill(os.getpid(), signal.SIGINT)))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            m.run(output=tmp_path, progress=lambda d, t: started.set())
        timer.join()
        assert len(list(tmp_path.glob("*.tiff"))) < 16
        assert m.run(output=tmp_path)["interrupted"] is False
