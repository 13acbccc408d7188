"""A ROS 2 bag as the input of depthmask.run (docs/ROSBAG.md): the bag that `depthmask synth --format
mcap` writes, run through Python, gives the bytes the CLI gives on the same bag and on the same frames
as a folder; the doctor lists the bag's topics."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import depthmask


def _synth(cli, out: Path, fmt: str) -> Path:
    r = subprocess.run([cli, "synth", "-o", str(out), "--frames", "4", "--size", "80x60", "--format", fmt],
                       capture_output=True, text=True)
    if r.returncode != 0 and "without ROS 2 bag support" in r.stdout + r.stderr:
        pytest.skip("this depthmask was built without bag support (DEPTHMASK_WITH_ROSBAG=OFF)")
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_run_on_a_bag_equals_the_cli_and_the_folder(cli, tmp_path):
    bag = _synth(cli, tmp_path / "bag", "mcap")
    folder = _synth(cli, tmp_path / "folder", "png")
    overrides = {"backend.kind": "cpu", "output.format": ["npy"], "output.preview": False}
    summary = depthmask.run(input=str(bag), output=str(tmp_path / "py"), overrides=overrides)
    assert summary["ok"] == 4 and summary["failed"] == 0, summary
    r = subprocess.run([cli, "run", "-i", str(bag), "-o", str(tmp_path / "cli"), "--backend", "cpu",
                        "--set", "output.format=[npy]", "--set", "output.preview=false"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    depthmask.run(input=str(folder), output=str(tmp_path / "dir"), overrides=overrides)
    py = sorted((tmp_path / "py").glob("*.npy"))
    cli_out = sorted((tmp_path / "cli").glob("*.npy"))
    folder_out = sorted((tmp_path / "dir").glob("*.npy"))
    assert [p.name for p in py][0] == "1700000000000000000.npy"
    assert len(py) == len(cli_out) == len(folder_out) == 4
    for a, b, c in zip(py, cli_out, folder_out):
        assert a.read_bytes() == b.read_bytes() == c.read_bytes(), (a, b, c)


def test_doctor_lists_the_topics_of_a_bag(cli, tmp_path):
    bag = _synth(cli, tmp_path / "bag", "mcap")
    report = depthmask.doctor(input=str(bag), overrides={"backend.kind": "cpu"})
    assert report["layout"] == "rosbag2", report
    topics = [c for c in report["checks"] if c["id"] == "topics"]
    assert topics and "/seg/mask" in topics[0]["detail"], report["checks"]
    assert dict(report["suggested"])["input.topics.depth"] == "/camera/depth/image_rect_raw"
