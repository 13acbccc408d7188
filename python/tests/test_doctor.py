"""depthmask.doctor: the CLI's `depthmask doctor` report as a dict, over the C ABI (dm_doctor)."""

from __future__ import annotations

import json
import subprocess

import pytest

import depthmask


def test_doctor_on_the_sample(sample):
    report = depthmask.doctor(sample / "depthmask.yaml")
    assert report["version"] == 1
    assert report["layout"] == "pattern"
    assert report["frames"] == 8 and report["decoded"] == 8
    assert report["exit_code"] == 0 and report["exit_code_strict"] == 0
    ids = [c["id"] for c in report["checks"]]
    assert ids[:3] == ["layout", "frames", "pairing"]
    assert all(c["level"] in ("ok", "info", "warning", "error") for c in report["checks"])


def test_doctor_input_sample_and_overrides(sample):
    report = depthmask.doctor(input=sample, overrides={"mask.threshold": 255}, sample=3)
    assert report["decoded"] == 3 and report["sample"] == [0, 3, 7]
    rule = next(c for c in report["checks"] if c["id"] == "mask_rule")
    assert rule["level"] == "error"
    assert report["exit_code"] == 1
    assert report["suggested"]["mask.threshold"] == "0"


def test_doctor_matches_the_cli(sample, cli):
    out = subprocess.run([cli, "doctor", "--json", "--config", str(sample / "depthmask.yaml")],
                         capture_output=True, text=True, check=True).stdout
    from_cli = json.loads(out[out.index("{"):])
    from_python = depthmask.doctor(sample / "depthmask.yaml")
    for r in (from_cli, from_python):
        r.pop("seconds")
    assert from_cli == from_python


def test_doctor_configuration_error_raises(sample):
    with pytest.raises(depthmask.ConfigError, match="depth.scale"):
        depthmask.doctor(input=sample, overrides=["depth.scale=abc"])
