"""Array rules: what Masker.mask accepts (dtypes, shapes, views, NumPy / PyTorch / DLPack /
__cuda_array_interface__) and that every bad array raises depthmask.InputError before the call."""

from __future__ import annotations

import numpy as np
import pytest

import depthmask
from producers import FakeCAI, FakeLegacy, FakeVersioned, OnlyDLPack
from reference import bits, reference_mask

RNG = np.random.default_rng(7)


def _frame(rows=6, cols=7, depth_dtype=np.uint16, mask_dtype=np.uint8):
    depth = RNG.integers(0, 4000, (rows, cols)).astype(depth_dtype)
    if depth_dtype == np.float32:
        depth *= np.float32(0.001)
    mask = RNG.integers(0, 2, (rows, cols)).astype(mask_dtype)
    return depth, mask


def _expect(depth, mask):
    return bits(reference_mask(depth, mask, {}))


# --- what is accepted --------------------------------------------------------------------------------


@pytest.mark.parametrize("depth_dtype", [np.uint16, np.float32])
@pytest.mark.parametrize("mask_dtype", [np.uint8, np.uint16, np.bool_])
def test_dtypes(cpu, depth_dtype, mask_dtype):
    depth, mask = _frame(depth_dtype=depth_dtype, mask_dtype=mask_dtype)
    assert np.array_equal(bits(cpu.mask(depth, mask)), _expect(depth, mask))


def test_out_is_written_and_returned(cpu):
    depth, mask = _frame()
    out = np.full(depth.shape, 3.0, np.float32)
    assert cpu.mask(depth, mask, out=out) is out
    assert np.array_equal(bits(out), _expect(depth, mask))


def test_stack_with_per_frame_and_shared_mask(cpu):
    depth = RNG.integers(0, 4000, (3, 5, 8)).astype(np.uint16)
    masks = RNG.integers(0, 2, (3, 5, 8)).astype(np.uint8)
    assert np.array_equal(bits(cpu.mask(depth, masks)), _expect(depth, masks))
    assert np.array_equal(bits(cpu.mask(depth, masks[1])), _expect(depth, masks[1]))


def test_read_only_inputs_are_fine(cpu):
    depth, mask = _frame()
    depth.setflags(write=False)
    mask.setflags(write=False)
    assert np.array_equal(bits(cpu.mask(depth, mask)), _expect(depth, mask))


def test_row_strided_views_and_size_one_axes(cpu):
    big = RNG.integers(0, 4000, (20, 30)).astype(np.uint16)
    bigm = RNG.integers(0, 2, (20, 30)).astype(np.uint8)
    for sl in [np.s_[2:9, 3:17], np.s_[::3, 5:6], np.s_[4:5, ::1], np.s_[1:2, 7:8]]:
        d, m = big[sl], bigm[sl]
        assert np.array_equal(bits(cpu.mask(d, m)), _expect(d, m)), sl
    col = big[:, 5:6]  # one column of a C array: column stride irrelevant
    assert np.array_equal(bits(cpu.mask(col[:, ::1], bigm[:, 2:3])), _expect(col, bigm[:, 2:3]))
    # A single column taken with a step: strides (60, 4) for one-pixel rows, still fine.
    one = big[:, ::2][:, 3:4]
    assert np.array_equal(bits(cpu.mask(one, bigm[:, 1:2])), _expect(one, bigm[:, 1:2]))


# --- what is refused, and how ------------------------------------------------------------------------


def _bad(cpu, match, depth=None, mask=None, out=None, color=None):
    d, m = _frame()
    depth = d if depth is None else depth
    mask = m if mask is None else mask
    with pytest.raises(depthmask.InputError, match=match) as e:
        cpu.mask(depth, mask, color=color, out=out)
    assert e.value.status == 1
    return e.value


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8, np.int16, ">u2"])
def test_wrong_depth_dtype(cpu, dtype):
    _bad(cpu, "depth: dtype .* must be uint16 or float32", depth=np.zeros((6, 7), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8])
def test_wrong_mask_dtype(cpu, dtype):
    _bad(cpu, "mask: dtype .* must be uint8, uint16 or bool", mask=np.zeros((6, 7), dtype))


def test_wrong_out_dtype(cpu):
    _bad(cpu, "out: dtype float64", out=np.zeros((6, 7), np.float64))


def test_not_an_array(cpu):
    _bad(cpu, "depth", depth=[[1, 2], [3, 4]])  # int64 once NumPy reads it


@pytest.mark.parametrize("shape", [(7,), (1, 2, 6, 7), ()])
def test_unsupported_ndim(cpu, shape):
    _bad(cpu, "dimensions", depth=np.zeros(shape, np.uint16), mask=np.zeros(shape, np.uint8))


def test_empty(cpu):
    _bad(cpu, "no pixels", depth=np.zeros((0, 7), np.uint16), mask=np.zeros((0, 7), np.uint8))


def test_shape_mismatch(cpu):
    _bad(cpu, "mask: shape", mask=np.zeros((6, 8), np.uint8))
    _bad(cpu, "mask: shape", mask=np.zeros((2, 6, 7), np.uint8))  # a stack mask for one frame
    _bad(cpu, "out: shape", out=np.zeros((6, 8), np.float32))
    _bad(cpu, "mask: shape", depth=np.zeros((2, 6, 7), np.uint16), mask=np.zeros((3, 6, 7), np.uint8))


def test_negative_strides(cpu):
    d, m = _frame()
    _bad(cpu, "depth: pixels of a row must be contiguous.*negative.*np.ascontiguousarray", depth=d[:, ::-1])
    _bad(cpu, "mask: a negative row stride.*np.ascontiguousarray", mask=m[::-1])
    _bad(cpu, "out: a negative", out=np.zeros((6, 7), np.float32)[::-1])


def test_non_contiguous_columns(cpu):
    big = np.zeros((6, 14), np.uint16)
    _bad(cpu, "depth: pixels of a row must be contiguous.*column stride 4 bytes.*np.ascontiguousarray", depth=big[:, ::2])
    _bad(cpu, "depth: pixels of a row must be contiguous", depth=np.zeros((7, 6), np.uint16).T)


def test_stride_not_a_multiple_of_the_pixel(cpu):
    odd = np.lib.stride_tricks.as_strided(np.zeros(60, np.uint16), (6, 7), (15, 2))
    _bad(cpu, "depth: the row stride 15 bytes is not a multiple of the 2-byte pixel", depth=odd)


def test_unaligned(cpu):
    buf = bytearray(6 * 7 * 2 + 1)
    unaligned = np.frombuffer(buf, dtype=np.uint16, offset=1, count=42).reshape(6, 7)
    assert not unaligned.flags.aligned
    _bad(cpu, "depth: the data pointer is not aligned to 2 bytes.*copy", depth=unaligned)
    fbuf = bytearray(6 * 7 * 4 + 2)
    _bad(cpu, "out: the data pointer is not aligned to 4 bytes",
         out=np.frombuffer(fbuf, dtype=np.float32, offset=2, count=42).reshape(6, 7))


def test_read_only_out(cpu):
    out = np.zeros((6, 7), np.float32)
    out.setflags(write=False)
    _bad(cpu, "out: the array is read-only", out=out)


def test_overlapping_out(cpu):
    _bad(cpu, "out: a row stride of 0",
         out=np.lib.stride_tricks.as_strided(np.zeros(7, np.float32), (6, 7), (0, 4)))
    _bad(cpu, "out: strides .* overlap",
         out=np.lib.stride_tricks.as_strided(np.zeros(20, np.float32), (6, 7), (8, 4)))


def test_bad_color(cpu):
    _bad(cpu, "color: dtype", color=np.zeros((6, 7, 3), np.float32))
    _bad(cpu, "color: shape .* 2 dimensions", color=np.zeros((6, 7), np.uint8))
    _bad(cpu, "color: shape .* must be BGR", color=np.zeros((6, 7, 4), np.uint8))
    _bad(cpu, "color: shape .* does not match", color=np.zeros((6, 8, 3), np.uint8))


def test_bad_stream_type(cpu):
    d, m = _frame()
    # Host arrays ignore the stream, but its type is still checked.
    with pytest.raises(depthmask.InputError, match="stream"):
        cpu.mask(d, m, stream="default")


# --- DLPack: legacy "dltensor" and versioned "dltensor_versioned" capsules ---------------------------


@pytest.mark.parametrize("kind", [FakeLegacy, FakeVersioned])
@pytest.mark.parametrize("layout", ["strides", "null_strides", "byte_offset"])
def test_dlpack_capsules(cpu, kind, layout):
    d, m = _frame(rows=5, cols=9)
    out = np.zeros(d.shape, np.float32)
    opts = {"null_strides": layout == "null_strides", "offset_by_byte_offset": layout == "byte_offset"}
    producers = [kind(d, kind is FakeVersioned, **opts), kind(m, kind is FakeVersioned, **opts),
                 kind(out, kind is FakeVersioned, **opts)]
    got = cpu.mask(*producers[:2], out=producers[2])
    assert got is producers[2]
    assert np.array_equal(bits(out), _expect(d, m))
    if kind is FakeVersioned:
        assert producers[0].calls[0]["max_version"] == (1, 0)
    assert all(c["stream"] is None for p in producers for c in p.calls)  # host arrays: no stream


def test_dlpack_strided_view(cpu):
    big = RNG.integers(0, 4000, (9, 20)).astype(np.uint16)
    d = big[1:7, 3:12]
    m = RNG.integers(0, 2, d.shape).astype(np.uint8)
    assert np.array_equal(bits(cpu.mask(FakeVersioned(d, True), m)), _expect(d, m))


def test_dlpack_read_only_out_is_refused(cpu):
    d, m = _frame()
    out = FakeVersioned(np.zeros(d.shape, np.float32), True, read_only=True)
    with pytest.raises(depthmask.InputError, match="read-only"):
        cpu.mask(d, m, out=out)


def test_dlpack_non_contiguous_columns(cpu):
    d = np.zeros((6, 14), np.uint16)[:, ::2]
    with pytest.raises(depthmask.InputError, match="contiguous"):
        cpu.mask(FakeLegacy(d, False), np.zeros(d.shape, np.uint8))


def test_numpy_own_dlpack(cpu):
    # NumPy's own producer (legacy capsule on NumPy 1.x, versioned on 2.x) behind an object that
    # offers only DLPack.
    d, m = _frame()
    if not hasattr(d, "__dlpack__"):
        pytest.skip("this NumPy has no __dlpack__")

    assert np.array_equal(bits(cpu.mask(OnlyDLPack(d), OnlyDLPack(m))), _expect(d, m))


# --- device arrays on the cpu backend: the library refuses them with a ConfigError --------------------


@pytest.mark.parametrize("which", ["cai", "dlpack_cuda"])
def test_device_array_on_cpu_backend_is_a_config_error(cpu, which):
    d, m = _frame()
    depth = FakeCAI(d) if which == "cai" else FakeVersioned(d, True, device_type=2)
    mask = FakeCAI(m) if which == "cai" else FakeVersioned(m, True, device_type=2)
    out = FakeCAI(np.zeros(d.shape, np.float32)) if which == "cai" else FakeVersioned(np.zeros(d.shape, np.float32), True, device_type=2)
    with pytest.raises(depthmask.ConfigError, match="backend") as e:
        cpu.mask(depth, mask, out=out)
    assert e.value.status == 2


def test_real_device_array_on_cpu_backend(cpu):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    d = torch.zeros((6, 7), dtype=torch.float32, device="cuda")
    m = torch.zeros((6, 7), dtype=torch.uint8, device="cuda")
    with pytest.raises(depthmask.ConfigError, match="backend"):
        cpu.mask(d, m)


# --- CPU PyTorch tensors -----------------------------------------------------------------------------


def test_torch_cpu_tensors(cpu):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    d, m = _frame(depth_dtype=np.float32)
    td = torch.from_numpy(d).requires_grad_(True)
    tm = torch.from_numpy(m.astype(np.bool_))
    got = cpu.mask(td, tm)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.device.type == "cpu"
    assert np.array_equal(bits(got.numpy()), bits(reference_mask(d, m.astype(np.bool_), {})))
    out = torch.zeros(d.shape)
    assert cpu.mask(td, tm, out=out) is out
    assert np.array_equal(bits(out.numpy()), bits(got.numpy()))
    # Views: a row-strided slice works, a column step is refused with torch's own remedy.
    big = torch.from_numpy(RNG.integers(0, 4000, (10, 20)).astype(np.float32))
    view = big[2:8, 4:11]
    mv = torch.from_numpy(RNG.integers(0, 2, (6, 7)).astype(np.uint8))
    assert np.array_equal(bits(cpu.mask(view, mv).numpy()), bits(reference_mask(view.numpy(), mv.numpy(), {})))
    with pytest.raises(depthmask.InputError, match=r"t.contiguous\(\)"):
        cpu.mask(big[:, ::2][:6, :7], mv)
    with pytest.raises(depthmask.InputError, match="torch.int16"):
        cpu.mask(torch.zeros((6, 7), dtype=torch.int16), mv)


def test_torch_legacy_dlpack(cpu):
    # PyTorch's own DLPack export ("dltensor" on 1.x, versioned on 2.x) behind an object offering only that.
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
    d, m = _frame(depth_dtype=np.float32)

    got = cpu.mask(OnlyDLPack(torch.from_numpy(d)), OnlyDLPack(torch.from_numpy(m)))
    assert isinstance(got, np.ndarray)
    assert np.array_equal(bits(got), _expect(d, m))
