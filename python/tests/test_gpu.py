"""GPU backends from Python: PyTorch CUDA tensors and CuPy arrays in and out (own pointers, no
copies), on non-default streams, stacks, DLPack and __cuda_array_interface__ producers, NumPy arrays on
GPU backends; every result equals the cpu backend's bit for bit. Skips, with the reason, where the
library has no CUDA, no GPU backend starts, or neither PyTorch nor CuPy has a device.

Runs from a copied folder with only DEPTHMASK_LIBRARY and PYTHONPATH (python/) set:
    DEPTHMASK_LIBRARY=.../libdepthmask.so.0 PYTHONPATH=python python3 -m pytest -q python/tests/test_gpu.py
"""

from __future__ import annotations

import numpy as np
import pytest

import depthmask
from producers import OnlyCAI, OnlyDLPack
from reference import bits

GPU_BACKENDS = ["copy", "zero_copy", "managed"]
SIZES = [(1, 1), (13, 1), (1, 13), (31, 33), (480, 640), (481, 639)]
CONFIGS = {
    "plain": {"depth": {"max": 3.0}},
    "labels_erode": {"depth": {"min": 0.3, "max": 2.5}, "mask": {"labels": [1, 3], "erode": 2},
                     "output": {"invalid": float("nan")}},
    "fraction_invert": {"mask": {"threshold_fraction": 0.4, "invert": True}, "depth": {"encoding": "apc"}},
}

if not depthmask.cuda_built:
    pytest.skip("the library was built without CUDA", allow_module_level=True)


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


def _cupy():
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy sees no CUDA device ({e})")
    return cupy


_maskers = {}


def _masker(kind, cfg_name):
    key = (kind, cfg_name)
    if key not in _maskers:
        try:
            _maskers[key] = depthmask.Masker(CONFIGS[cfg_name], overrides={"backend.kind": kind})
        except depthmask.PlatformError as e:
            pytest.skip(f"backend {kind} does not start here: {e}")
    return _maskers[key]


def teardown_module(module):
    for m in _maskers.values():
        m.close()


def _host_case(shape, depth_dtype, mask_dtype, seed=0):
    rng = np.random.default_rng(seed)
    if depth_dtype == np.uint16:
        depth = rng.integers(0, 40000, shape).astype(np.uint16)
        depth[rng.random(shape) < 0.1] = 0
    else:
        depth = rng.uniform(-0.5, 4.0, shape).astype(np.float32)
        depth[rng.random(shape) < 0.05] = np.nan
    top = {np.uint8: 4, np.uint16: 65536, np.bool_: 2}[mask_dtype]
    mask = rng.integers(0, top, shape).astype(mask_dtype)
    return depth, mask


def _cpu_result(cfg_name, depth, mask):
    return bits(_masker("cpu", cfg_name).mask(depth, mask))


@pytest.mark.parametrize("kind", GPU_BACKENDS)
@pytest.mark.parametrize("cfg_name", list(CONFIGS))
def test_numpy_on_gpu_backends(kind, cfg_name):
    for shape in SIZES:
        for depth_dtype in (np.uint16, np.float32):
            depth, mask = _host_case(shape, depth_dtype, np.uint8)
            got = _masker(kind, cfg_name).mask(depth, mask)
            assert isinstance(got, np.ndarray)
            assert np.array_equal(bits(got), _cpu_result(cfg_name, depth, mask)), (kind, shape, depth_dtype)


@pytest.mark.parametrize("kind", GPU_BACKENDS)
@pytest.mark.parametrize("cfg_name", list(CONFIGS))
@pytest.mark.parametrize("mask_dtype", [np.uint8, np.bool_])
def test_torch_cuda_on_a_side_stream(kind, cfg_name, mask_dtype):
    torch = _torch()
    m = _masker(kind, cfg_name)
    side = torch.cuda.Stream()
    for shape in SIZES:
        depth, mask = _host_case(shape, np.uint16 if shape[0] % 2 else np.float32, mask_dtype, seed=shape[0])
        expected = _cpu_result(cfg_name, depth, mask)
        try:
            d = torch.from_numpy(depth)
        except TypeError:
            pytest.skip("this PyTorch has no uint16 tensors (2.3 and later do)")
        d = d.cuda()
        k = torch.from_numpy(mask).cuda()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # the current stream: the default for mask()
            got = m.mask(d, k)
        out = torch.empty_like(got)
        got2 = m.mask(d, k, out=out, stream=side)  # the stream named explicitly
        assert got2 is out
        side.synchronize()
        assert got.device == d.device and got.dtype == torch.float32
        assert np.array_equal(bits(got.cpu().numpy()), expected), (kind, shape)
        assert np.array_equal(bits(out.cpu().numpy()), expected), (kind, shape)


@pytest.mark.parametrize("kind", GPU_BACKENDS)
def test_torch_stacks(kind):
    torch = _torch()
    m = _masker(kind, "labels_erode")
    depth, _ = _host_case((8, 121, 203), np.float32, np.uint8, seed=5)
    masks = np.random.default_rng(6).integers(0, 4, (8, 121, 203)).astype(np.uint8)
    d, k = torch.from_numpy(depth).cuda(), torch.from_numpy(masks).cuda()
    got = m.mask(d, k)
    one = m.mask(d, k[3])  # one mask for every frame
    torch.cuda.current_stream().synchronize()
    assert got.shape == d.shape
    assert np.array_equal(bits(got.cpu().numpy()), _cpu_result("labels_erode", depth, masks))
    assert np.array_equal(bits(one.cpu().numpy()), _cpu_result("labels_erode", depth, masks[3]))
    # A row-strided device view (an ROI of a larger tensor).
    big = torch.from_numpy(np.random.default_rng(7).uniform(0, 3, (300, 500)).astype(np.float32)).cuda()
    roi, roi_mask = big[10:130, 7:207], k[0, :120, :200]
    got_roi = m.mask(roi, roi_mask)
    torch.cuda.current_stream().synchronize()
    assert np.array_equal(bits(got_roi.cpu().numpy()),
                          _cpu_result("labels_erode", roi.cpu().numpy(), roi_mask.cpu().numpy()))


@pytest.mark.parametrize("kind", GPU_BACKENDS)
def test_cupy_in_and_out(kind):
    cupy = _cupy()
    m = _masker(kind, "fraction_invert")
    stream = cupy.cuda.Stream(non_blocking=True)
    for shape in [(1, 1), (31, 33), (481, 639), (4, 64, 96)]:
        depth, mask = _host_case(shape, np.uint16, np.uint16, seed=len(shape))
        expected = _cpu_result("fraction_invert", depth, mask)
        with stream:
            d, k = cupy.asarray(depth), cupy.asarray(mask)
            got = m.mask(d, k)  # cupy's current stream
            out = cupy.empty(shape, cupy.float32)
        got2 = m.mask(d, k, out=out, stream=stream)
        stream.synchronize()
        assert isinstance(got, cupy.ndarray) and got2 is out
        assert np.array_equal(bits(cupy.asnumpy(got)), expected), (kind, shape)
        assert np.array_equal(bits(cupy.asnumpy(out)), expected), (kind, shape)


@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
def test_protocol_only_producers(wrap):
    torch = _torch()
    m = _masker("copy", "plain")
    depth, mask = _host_case((57, 91), np.float32, np.uint8, seed=9)
    d, k = torch.from_numpy(depth).cuda(), torch.from_numpy(mask).cuda()
    out = torch.zeros_like(d)
    torch.cuda.current_stream().synchronize()
    m.mask(wrap(d), wrap(k), out=wrap(out), stream=torch.cuda.current_stream())
    torch.cuda.current_stream().synchronize()
    assert np.array_equal(bits(out.cpu().numpy()), _cpu_result("plain", depth, mask))


def test_device_array_on_another_gpu_raises():
    torch = _torch()
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU: no other device to put the array on")
    m = _masker("copy", "plain")
    other = 1 if m.device != 1 else 0
    d = torch.zeros((8, 8), dtype=torch.float32, device=f"cuda:{other}")
    k = torch.zeros((8, 8), dtype=torch.uint8, device=f"cuda:{other}")
    with pytest.raises(depthmask.Error, match="device"):
        m.mask(d, k)


def test_device_array_on_cpu_backend_raises():
    torch = _torch()
    d = torch.zeros((8, 8), dtype=torch.float32, device="cuda")
    k = torch.zeros((8, 8), dtype=torch.uint8, device="cuda")
    with pytest.raises(depthmask.ConfigError, match="backend"):
        _masker("cpu", "plain").mask(d, k)


def test_auto_backend():
    with depthmask.Masker() as m:
        print(f"auto chose {m.backend} on device {m.device}: {m.reason}")
        assert m.backend in GPU_BACKENDS + ["cpu"]
