"""Property tests: Masker.mask on random shapes, dtypes, strided views and configurations equals the
NumPy statement of the rule (reference.py) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed (python3-hypothesis)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import depthmask  # noqa: E402
from reference import bits, reference_mask  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALES = [0.001, 0.0001, 0.0002, 0.00025, 0.000125]
SPECIAL_U16 = [0, 1, 2, 999, 1000, 1499, 1500, 1501, 4095, 8191, 40000, 65534, 65535]
SPECIAL_F32 = [0.0, -0.0, -1.0, 1e-6, 0.25, 0.5, 1.5, 1.5000001, 2.0, 9.99, 10.0, 10.000001, 1e30,
               float("inf"), float("-inf"), float("nan")]


@st.composite
def configs(draw, mask_dtype):
    full = 1 if mask_dtype == np.bool_ else 255 if mask_dtype == np.uint8 else 65535
    min_m = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0, 1.5]))
    cfg = {
        "depth": {
            "scale": draw(st.sampled_from(SCALES)),
            "min": min_m,
            "max": draw(st.sampled_from([m for m in (0.5, 1.5, 2.0, 3.3, 6.5535, 10.0, 100.0) if m > min_m])),
            "encoding": draw(st.sampled_from(["plain", "plain", "apc"])),
            "invalid_values": draw(st.lists(st.sampled_from([65535, 4095, 1500, 7]), max_size=3, unique=True)),
        },
        "mask": {
            "invert": draw(st.booleans()),
            "erode": draw(st.sampled_from([0, 0, 0, 1, 2])),
        },
        "output": {"invalid": draw(st.sampled_from([0.0, -1.0, float("nan"), 65.5]))},
    }
    kind = draw(st.sampled_from(["threshold", "labels", "fraction"]))
    if kind == "threshold":
        cfg["mask"]["threshold"] = draw(st.integers(0, min(full, 300)))
    elif kind == "labels":
        cfg["mask"]["labels"] = draw(st.lists(st.integers(0, min(full, 300)), min_size=1, max_size=4, unique=True))
    else:
        cfg["mask"]["threshold_fraction"] = draw(st.sampled_from([0.0, 0.1, 0.5, 0.5019607843137255, 0.99, 1.0]))
    return cfg


def _values(rng, shape, dtype):
    """Random pixels with the rule's edge values mixed in (half of them)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == np.float32:
        special, uniform = np.array(SPECIAL_F32, np.float32), rng.uniform(0, 12, shape).astype(np.float32)
    else:
        top = 65535 if dtype == np.uint16 else 255
        special = np.array(SPECIAL_U16 if dtype == np.uint16 else [0, 1, 2, 3, 127, 128, 255], dtype)
        uniform = rng.integers(0, top + 1, shape).astype(dtype)
    picks = special[rng.integers(0, len(special), shape)]
    return np.where(rng.random(shape) < 0.5, picks, uniform).astype(dtype)


@st.composite
def strided(draw, shape, dtype):
    """An array of `shape` that may be a row-strided view into a larger one (an ROI / row step)."""
    rows, cols = shape[-2:]
    step = draw(st.sampled_from([1, 1, 2]))
    pad_r, pad_c, off_c = draw(st.integers(0, 2)), draw(st.integers(0, 5)), draw(st.integers(0, 3))
    big_shape = shape[:-2] + (rows * step + pad_r, cols + pad_c + off_c)
    big = _values(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), big_shape, dtype)
    return big[..., pad_r:pad_r + rows * step:step, off_c:off_c + cols]


@st.composite
def cases(draw):
    rows = draw(st.sampled_from([1, 2, 3, 13, 31, 33]) | st.integers(1, 40))
    cols = draw(st.sampled_from([1, 2, 13, 31, 33]) | st.integers(1, 41))
    frames = draw(st.sampled_from([0, 0, 0, 1, 3]))
    depth_dtype = draw(st.sampled_from([np.uint16, np.float32]))
    mask_dtype = draw(st.sampled_from([np.uint8, np.uint16, np.bool_]))
    shape = (rows, cols) if frames == 0 else (frames, rows, cols)
    shared_mask = frames > 0 and draw(st.booleans())
    depth = draw(strided(shape, depth_dtype))
    mask = draw(strided(shape[-2:] if shared_mask else shape, mask_dtype))
    return depth, mask, draw(configs(mask_dtype))


@SETTINGS
@given(cases())
def test_mask_equals_reference(case):
    depth, mask, cfg = case
    with depthmask.Masker(cfg, overrides={"backend.kind": "cpu"}) as m:
        got = m.mask(depth, mask)
        expected = reference_mask(depth, mask, cfg)
        assert np.array_equal(bits(got), bits(expected)), (depth, mask, cfg, got, expected)
        # The same into a strided out view.
        big = np.full(depth.shape[:-1] + (depth.shape[-1] + 3,), 7.0, np.float32)
        out = big[..., 1:1 + depth.shape[-1]]
        assert m.mask(depth, mask, out=out) is out
        assert np.array_equal(bits(out), bits(expected))
        assert (big[..., 0] == 7.0).all() and (big[..., -2:] == 7.0).all()


def test_shared_mask_by_broadcast(cpu):
    # np.broadcast_to gives a frame stride of 0: one mask image for every frame of the stack.
    rng = np.random.default_rng(1)
    depth = rng.integers(0, 3000, (4, 9, 11), dtype=np.uint16)
    mask = rng.integers(0, 2, (9, 11), dtype=np.uint8)
    stacked = np.broadcast_to(mask, depth.shape)
    assert stacked.strides[0] == 0
    expected = reference_mask(depth, mask, {})
    assert np.array_equal(bits(cpu.mask(depth, stacked)), bits(expected))
    assert np.array_equal(bits(cpu.mask(depth, mask)), bits(expected))
