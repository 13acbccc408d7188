#!/usr/bin/env python3
"""Python-side benchmark of depthmask.Masker.mask beside its peers in the same process.

Host arrays (float32 depth, uint8 mask, C-contiguous NumPy, ``out=`` preallocated): the p50 of
--iterations calls after --warmup, at 640x480 and 3840x2160, for every backend that starts here and
Masker() (auto); beside them numpy.where (the obvious NumPy formula of the same rule) and, when
importable with a GPU, PyTorch (pageable H2D + torch.where + D2H, and the same with pinned host
buffers) and CuPy (pageable).

Device-resident stacks (N=8 at 1920x1080 and 3840x2160) of PyTorch tensors and CuPy arrays: time
per call with CUDA events on the caller's stream, and bytes read + written per second as a share of
the device-to-device copy bandwidth measured in the same run (torch.empty_like(x).copy_(x));
torch.where on the same data beside it.

    DEPTHMASK_LIBRARY=build/libdepthmask.so.0 PYTHONPATH=python python3 bench/python/bench_masker.py --out bench.json
    ... --quick       # small sizes and counts: runs anywhere in seconds (numbers mean little)

Prints a markdown table and writes the rows as JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import depthmask

MAX_M = 10.0  # the default depth.max; the default rule keeps mask > 0 and depth finite, > 0, <= max


def numpy_rule(d, k):
    # The same rule as Masker() with the defaults, the way one writes it in NumPy (NaN fails the compares).
    return np.where((k > 0) & (d > 0) & (d <= np.float32(MAX_M)), d, np.float32(0))


def p50_us(fn, iterations, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def host_frame(rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    depth = rng.uniform(-0.2, 12.0, (rows, cols)).astype(np.float32)
    depth[rng.random((rows, cols)) < 0.02] = np.nan
    mask = (rng.random((rows, cols)) < 0.6).astype(np.uint8)
    return depth, mask


def open_maskers(kinds):
    """(label, Masker) for each backend that starts here, then Masker() with auto."""
    maskers = []
    for kind in kinds:
        try:
            maskers.append((kind, depthmask.Masker(overrides={"backend.kind": kind, "logging.level": "warn"})))
        except depthmask.Error as e:
            print(f"backend {kind}: not available here ({type(e).__name__}: {e.message.splitlines()[0]})", file=sys.stderr)
    auto = depthmask.Masker(overrides={"logging.level": "warn"})
    maskers.append((f"auto ({auto.backend})", auto))
    return maskers


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def cupy_cuda():
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # noqa: BLE001 - no CuPy, or no device / driver
        return None


def host_rows(args, maskers, torch, cupy):
    rows = []
    for rows_, cols in args.sizes:
        size = f"{cols}x{rows_}"
        d, k = host_frame(rows_, cols)
        out = np.empty_like(d)
        expected = numpy_rule(d, k).view(np.uint32)

        def add(impl, us, note=""):
            mpx = rows_ * cols / us  # megapixels per second (pixels per microsecond)
            rows.append({"section": "host", "size": size, "impl": impl, "p50_us": round(us, 1),
                         "mpix_per_s": round(mpx, 1), "note": note})

        for label, m in maskers:
            m.mask(d, k, out=out)
            assert np.array_equal(out.view(np.uint32), expected), f"{label} disagrees with numpy.where"
            add(f"depthmask {label}", p50_us(lambda m=m: m.mask(d, k, out=out), args.iterations, args.warmup))
        add("numpy.where", p50_us(lambda: numpy_rule(d, k), args.iterations, args.warmup), "allocates its result")
        if torch is not None:
            zero = torch.zeros((), dtype=torch.float32, device="cuda")

            def torch_pageable():
                td, tk = torch.from_numpy(d).cuda(), torch.from_numpy(k).cuda()
                return torch.where((tk > 0) & (td > 0) & (td <= MAX_M), td, zero).cpu()

            pd, pk = torch.from_numpy(d).pin_memory(), torch.from_numpy(k).pin_memory()
            pout = torch.empty(d.shape, dtype=torch.float32).pin_memory()

            def torch_pinned():
                td, tk = pd.cuda(non_blocking=True), pk.cuda(non_blocking=True)
                pout.copy_(torch.where((tk > 0) & (td > 0) & (td <= MAX_M), td, zero), non_blocking=True)
                torch.cuda.current_stream().synchronize()

            add("torch pageable", p50_us(torch_pageable, args.iterations, args.warmup), "H2D + torch.where + D2H")
            add("torch pinned", p50_us(torch_pinned, args.iterations, args.warmup), "pinned host buffers")
        if cupy is not None:
            def cupy_pageable():
                cd, ck = cupy.asarray(d), cupy.asarray(k)
                return cupy.where((ck > 0) & (cd > 0) & (cd <= MAX_M), cd, cupy.float32(0)).get()

            add("cupy pageable", p50_us(cupy_pageable, args.iterations, args.warmup), "H2D + cupy.where + D2H")
    return rows


def event_ms(torch, fn, iterations, warmup):
    """Milliseconds per call, CUDA events on the current stream around `iterations` calls."""
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iterations


def device_rows(args, maskers, torch, cupy):
    rows = []
    gpu = [(label, m) for label, m in maskers if m.backend != "cpu"]
    if torch is None or not gpu:
        why = "no PyTorch with CUDA" if torch is None else "no GPU backend"
        print(f"device-resident stacks: skipped ({why})", file=sys.stderr)
        return rows
    iterations = max(args.iterations // 10, 5)
    for frames, rows_, cols in args.stacks:
        size = f"{frames}x{cols}x{rows_}"
        d, k = host_frame(rows_, cols, seed=1)
        td = torch.from_numpy(np.broadcast_to(d, (frames, rows_, cols)).copy()).cuda()
        tk = torch.from_numpy(np.broadcast_to(k, (frames, rows_, cols)).copy()).cuda()
        tout = torch.empty_like(td)
        moved = td.numel() * (4 + 1 + 4)  # depth and mask read, out written
        copy_ms = event_ms(torch, lambda: torch.empty_like(td).copy_(td), iterations, args.warmup)
        copy_gbs = 2 * td.numel() * 4 / copy_ms / 1e6

        def add(impl, ms, note=""):
            gbs = moved / ms / 1e6
            rows.append({"section": "device", "size": size, "impl": impl, "ms": round(ms, 4), "gb_per_s": round(gbs, 1),
                         "pct_of_copy": round(100 * gbs / copy_gbs, 1), "note": note})

        add("torch copy_ (d2d)", copy_ms, f"{copy_gbs:.0f} GB/s read+written: the 100% line")
        zero = torch.zeros((), dtype=torch.float32, device="cuda")
        add("torch.where", event_ms(torch, lambda: torch.where((tk > 0) & (td > 0) & (td <= MAX_M), td, zero),
                                    iterations, args.warmup))
        for label, m in gpu:
            m.mask(td, tk, out=tout)
            torch.cuda.current_stream().synchronize()
            expected = numpy_rule(d, k).view(np.uint32)
            assert np.array_equal(tout[frames - 1].cpu().numpy().view(np.uint32), expected), label
            add(f"depthmask {label} (torch)", event_ms(torch, lambda m=m: m.mask(td, tk, out=tout), iterations, args.warmup))
        if cupy is not None:
            cd, ck, cout = cupy.asarray(td), cupy.asarray(tk), cupy.asarray(tout)  # the same memory (CAI)
            for label, m in gpu:
                # CuPy's current stream is the legacy default stream here, as is torch's.
                add(f"depthmask {label} (cupy)", event_ms(torch, lambda m=m: m.mask(cd, ck, out=cout), iterations, args.warmup))
        del td, tk, tout
        torch.cuda.empty_cache()
    return rows


def table(rows):
    lines = []
    for section, cols in (("host", ["size", "impl", "p50_us", "mpix_per_s", "note"]),
                          ("device", ["size", "impl", "ms", "gb_per_s", "pct_of_copy", "note"])):
        part = [r for r in rows if r["section"] == section]
        if not part:
            continue
        lines += ["", f"### {section}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in part]
    return "\n".join(lines)


def parse_size(text):
    w, h = text.lower().split("x")
    return int(h), int(w)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--quick", action="store_true", help="small sizes and counts (for a smoke run)")
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--sizes", default="640x480,3840x2160", help="host frame sizes WIDTHxHEIGHT")
    ap.add_argument("--backends", default="cpu,copy,zero_copy,managed")
    args = ap.parse_args(argv)
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    args.stacks = [(8, 1080, 1920), (8, 2160, 3840)]
    if args.quick:
        args.iterations, args.warmup = min(args.iterations, 30), min(args.warmup, 3)
        args.sizes, args.stacks = [(48, 64), (240, 320)], [(2, 120, 160)]
    kinds = [k for k in args.backends.split(",") if k]
    maskers = open_maskers(kinds)
    torch, cupy = torch_cuda(), cupy_cuda()
    rows = host_rows(args, maskers, torch, cupy) + device_rows(args, maskers, torch, cupy)
    info = {"depthmask": depthmask.__version__, "library": depthmask.library_path, "cuda_built": depthmask.cuda_built,
            "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "torch": getattr(torch, "__version__", None), "cupy": getattr(cupy, "__version__", None),
            "iterations": args.iterations, "warmup": args.warmup, "quick": args.quick,
            "backends": {label: {"backend": m.backend, "device": m.device, "reason": m.reason} for label, m in maskers}}
    print(f"depthmask {info['depthmask']} ({info['library']}), Python {info['python']}, NumPy {info['numpy']}, "
          f"torch {info['torch']}, cupy {info['cupy']}; {args.iterations} calls after {args.warmup} warm-up")
    for label, m in maskers:
        print(f"- {label}: backend {m.backend}, device {m.device}: {m.reason}")
    print(table(rows))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"info": info, "rows": rows}, f, indent=1)
    for _, m in maskers:
        m.close()


if __name__ == "__main__":
    main()
