#!/usr/bin/env python3
"""The batch job of `depthmask run`, written the way a Python user would: a process pool over the frames.

Each worker reads one frame's 16-bit depth PNG and 8-bit mask PNG with OpenCV, applies the rule in
NumPy (metres = depth * scale as float32; kept where mask > threshold and min <= metres <= max, else
0) and writes a float32 TIFF named after the frame (DATA/depth/000123.png -> OUT/000123.tiff), as
depthmask does. It reads the folder `depthmask synth` writes (depth/, mask/, depthmask.yaml).

    python3 bench/pool/pool_baseline.py DATA OUT [--workers N] [--chunksize K]

For the synthetic data the output pixels equal depthmask's: invalid is 0, so a depth of 0 (no
measurement) gives 0 either way, and the float compares of metres against min and max agree with
depthmask's integer bounds at scale 0.001.
"""

import argparse
import os
import sys
import time
from multiprocessing import Pool

import cv2
import numpy as np


def read_config(path):
    """depth.scale/min/max and mask.threshold from depthmask.yaml (PyYAML when present, else the
    two-level `section:` / `  key: value` lines that file uses)."""
    try:
        import yaml

        with open(path) as f:
            doc = yaml.safe_load(f)
    except ImportError:
        doc, section = {}, None
        with open(path) as f:
            for line in f:
                text = line.split("#", 1)[0].rstrip()
                if not text.strip():
                    continue
                key, _, value = text.strip().partition(":")
                if not line.startswith(" "):
                    section = doc.setdefault(key, {})
                elif line.startswith("  ") and not line.startswith("   ") and section is not None:
                    section[key] = value.strip()
    # A generated config names only the keys that differ from depthmask's defaults (depth.scale 0.001,
    # depth.min 0, depth.max 10, mask.threshold 0): the rest are those.
    depth, mask = doc.get("depth") or {}, doc.get("mask") or {}
    return (float(depth.get("scale", 0.001)), float(depth.get("min", 0.0)), float(depth.get("max", 10.0)),
            int(mask.get("threshold", 0)))


def init_worker():
    cv2.setNumThreads(1)  # one process per core already; OpenCV's own threads would only compete


def process(job):
    depth_path, mask_path, out_path, (scale, dmin, dmax, threshold) = job
    depth = cv2.imread(depth_path, cv2.IMREAD_UNCHANGED)
    mask = cv2.imread(mask_path, cv2.IMREAD_UNCHANGED)
    if depth is None or mask is None:
        raise RuntimeError(f"cannot read {depth_path} or {mask_path}")
    metres = depth.astype(np.float32) * np.float32(scale)
    keep = (mask > threshold) & (metres >= dmin) & (metres <= dmax)
    if not cv2.imwrite(out_path, np.where(keep, metres, np.float32(0))):
        raise RuntimeError(f"cannot write {out_path}")
    return out_path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", help="dataset folder (depth/, mask/, depthmask.yaml)")
    ap.add_argument("output", help="output folder (created)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: cpu count)")
    ap.add_argument("--chunksize", type=int, default=0, help="frames per task (default: as Pool.map picks)")
    args = ap.parse_args()

    start = time.perf_counter()
    rule = read_config(os.path.join(args.input, "depthmask.yaml"))
    names = sorted(n for n in os.listdir(os.path.join(args.input, "depth")) if n.endswith(".png"))
    os.makedirs(args.output, exist_ok=True)
    jobs = [(os.path.join(args.input, "depth", n), os.path.join(args.input, "mask", n),
             os.path.join(args.output, os.path.splitext(n)[0] + ".tiff"), rule) for n in names]
    # Pool.map's own choice: about four chunks per worker.
    chunksize = args.chunksize or max(1, -(-len(jobs) // (4 * args.workers)))
    with Pool(args.workers, initializer=init_worker) as pool:
        done = sum(1 for _ in pool.imap_unordered(process, jobs, chunksize=chunksize))
    seconds = time.perf_counter() - start
    print(f"pool_baseline: {done} frame(s) with {args.workers} worker(s) in {seconds:.2f} s "
          f"({done / seconds:.1f} frames/s)")
    return 0 if done == len(jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
