"""Bit-identity with the CLI on the real APC frames (shared/data): the CLI masks the folder to .npy,
Masker.mask masks the same frames decoded here (PIL), with the same configuration; every pixel's
float32 bits agree (NaN included)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import depthmask
from reference import bits

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed (python3-pil) to decode the PNGs")

CONFIG = """\
depth: {scale: 0.0001, encoding: apc, min: 0.2, max: 1.2}
mask: {threshold: 0, erode: 1}
output: {format: npy, invalid: .nan, preview: false}
backend: {kind: cpu}
"""


def _png(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        a = np.array(im)
    return a.astype(np.uint16) if a.dtype == np.int32 else a  # PIL reads 16-bit PNGs as int32


def _cli_run(cli, scene, config, out, *sets):
    cmd = [cli, "run", "-c", str(config), "-i", str(scene), "-o", str(out)]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    outputs = sorted(out.glob("*.npy"))
    assert len(outputs) == 8, r.stdout + r.stderr
    return outputs


@pytest.fixture(scope="module")
def scene(shared_data):
    return shared_data / "apc-vision-toolbox" / "scene-0000"


def _backend_usable(kind: str) -> str:
    """Empty when a Masker on `kind` starts here, else why not."""
    try:
        with depthmask.Masker(overrides={"backend.kind": kind}):
            return ""
    except depthmask.Error as e:
        return str(e)


@pytest.mark.parametrize("kind", ["cpu", "copy", "zero_copy", "managed"])
@pytest.mark.parametrize("object_name", [None, "kleenex_tissue_box"])
def test_cli_and_masker_agree_on_apc(cli, scene, tmp_path, object_name, kind):
    why = _backend_usable(kind)
    if why:
        pytest.skip(f"backend {kind} does not start here: {why}")
    config = tmp_path / "apc.yaml"
    config.write_text(CONFIG)
    sets = [] if object_name is None else [f"input.object={object_name}"]
    outputs = _cli_run(cli, scene, config, tmp_path / "out", *sets)
    overrides = {"backend.kind": kind}  # the CLI ran on cpu; the Masker on each backend
    if object_name is not None:  # what the APC layout reads from masks/<object>.thresh.txt
        overrides["mask.threshold_fraction"] = float((scene / "masks" / f"{object_name}.thresh.txt").read_text().split()[0])
    with depthmask.Masker(config, overrides=overrides) as m:
        assert m.backend == kind
        for npy in outputs:
            frame_id = npy.name.split(".")[0]
            depth = _png(scene / f"frame-{frame_id}.depth.png")
            if object_name is None:
                mask = _png(scene / "segm" / f"frame-{frame_id}.segm.png")
                assert mask.dtype == np.uint8
            else:
                mask = _png(scene / "masks" / f"frame-{frame_id}.{object_name}.mask.png")
                assert mask.dtype == np.uint16
            assert depth.dtype == np.uint16
            cli_out = np.load(npy)
            ours = m.mask(depth, mask)
            assert np.isfinite(ours).sum() > 1000, "the configuration keeps almost nothing: a weak comparison"
            assert np.array_equal(bits(ours), bits(cli_out)), npy.name
