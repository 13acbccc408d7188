"""A NumPy statement of the per-pixel rule (kernels/include/depthmask/kernels/mask_rule.h), written
from the header for the property tests: the library must agree with it bit for bit."""

from __future__ import annotations

import math

import numpy as np


def raw_bounds(scale: float, min_m: float, max_m: float) -> tuple[int, int]:
    """set_depth_range()'s inclusive raw-unit range, derived in double precision."""
    lo = math.ceil(min_m / scale * (1.0 - 1e-9))
    hi = math.floor(max_m / scale * (1.0 + 1e-9))
    raw_min = 0 if lo <= 0 else 65536 if lo >= 65536 else int(lo)
    raw_max = 0 if hi < 0 else 65535 if hi >= 65535 else int(hi)
    if hi < 0:
        raw_min, raw_max = 1, 0
    return raw_min, raw_max


def fraction_threshold(fraction: float, full_scale: int) -> int:
    """The integer T with "mask > T" == "mask / full_scale > fraction" for every mask value."""
    t = min(max(math.floor(fraction * full_scale), 0), full_scale)
    while t < full_scale and not ((t + 1) / full_scale > fraction):
        t += 1
    while t > 0 and t / full_scale > fraction:
        t -= 1
    return t


def mask_test(mask: np.ndarray, cfg: dict) -> np.ndarray:
    """The mask test per pixel (bool), before erode."""
    m = cfg.get("mask", {})
    values = mask.astype(np.uint32)
    labels = m.get("labels") or []
    if labels:
        keep = np.isin(values, np.array(labels, dtype=np.uint32))
    else:
        if m.get("threshold_fraction") is not None:
            full = 65535 if mask.dtype == np.uint16 else 255  # bool masks are 8-bit masks
            t = fraction_threshold(float(m["threshold_fraction"]), full)
        else:
            t = int(m.get("threshold", 0))
        keep = values > t
    return keep != bool(m.get("invert", False))


def erode(keep: np.ndarray, radius: int) -> np.ndarray:
    """AND over the (2r+1)^2 window; pixels outside the image pass."""
    if radius == 0:
        return keep
    rows, cols = keep.shape[-2:]
    pad = [(0, 0)] * (keep.ndim - 2) + [(radius, radius), (radius, radius)]
    padded = np.pad(keep, pad, constant_values=True)
    out = np.ones_like(keep)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            out &= padded[..., dy:dy + rows, dx:dx + cols]
    return out


def decode_raw(stored: np.ndarray, cfg: dict) -> np.ndarray:
    d = cfg.get("depth", {})
    marker = stored == 0
    for v in d.get("invalid_values") or []:
        marker |= stored == v
    w = stored.astype(np.uint32)
    if d.get("encoding", "plain") == "apc":
        w = ((w >> 3) | (w << 13)) & 0xFFFF
    return np.where(marker, 0, w).astype(np.uint16)


def reference_mask(depth: np.ndarray, mask: np.ndarray, cfg: dict) -> np.ndarray:
    """float32 metres for depth (uint16 or float32) and mask (uint8, uint16 or bool; depth's shape or
    one image for a stack) under configuration `cfg` (a nested dict of the keys the rule reads)."""
    d = cfg.get("depth", {})
    scale = float(d.get("scale", 0.001))
    min_m, max_m = float(d.get("min", 0.0)), float(d.get("max", 10.0))
    invalid = np.float32(cfg.get("output", {}).get("invalid", 0.0))
    keep = erode(mask_test(mask, cfg), int(cfg.get("mask", {}).get("erode", 0)))
    keep = np.broadcast_to(keep, depth.shape)
    if depth.dtype == np.uint16:
        decoded = decode_raw(depth, cfg)
        raw_min, raw_max = raw_bounds(scale, min_m, max_m)
        in_range = (decoded > 0) & (decoded >= raw_min) & (decoded <= raw_max)
        metres = decoded.astype(np.float32) * np.float32(scale)
    else:
        metres = depth.astype(np.float32, copy=False)
        with np.errstate(invalid="ignore"):
            in_range = (np.isfinite(metres) & (metres > 0) & (metres >= np.float32(min_m))
                        & (metres <= np.float32(max_m)))
    return np.where(keep & in_range, metres, invalid).astype(np.float32)


def bits(a) -> np.ndarray:
    """The float32 result as uint32 words: compare with np.array_equal, NaN-safe and bit-exact."""
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
