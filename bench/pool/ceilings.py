#!/usr/bin/env python3
"""The ceilings a `depthmask run` (and the process pool) work under, measured on this machine.

  (a) output writes: files of a run's float TIFF size (W*H*4 + 1 KiB) written as a run writes them
      (a temp file in the output folder, then rename), 1 thread and --workers threads: MB/s, files/s.
  (b) listing and opening: os.scandir of the dataset's depth/ and mask/, and open + read of every
      file (page cache warm), 1 and --workers threads: files/s.
  (c) OpenCV's codecs, one thread: cv2.imdecode of a frame's depth + mask PNG bytes held in memory,
      the NumPy rule, cv2.imencode('.tiff', float32): ms per frame; the codec bound is
      workers / (decode + encode) frames/s.
  (d) CUDA start in a fresh process: dlopen libcuda.so.1, cuInit, cuDeviceGet,
      cuDevicePrimaryCtxRetain; and the runtime's first call (dlopen libcudart, cudaFree(0)).
      Skipped, with the reason, without a driver or GPU.
  (e) process start: `depthmask --version` wall time, best of 10; the loader's own account
      (LD_DEBUG=statistics: startup and relocation time, in cycles of the TSC, here converted with
      /proc/cpuinfo's MHz); the shared libraries it loads; the pool interpreter's `import numpy, cv2`.
  (f) `depthmask run` of a one-frame dataset, best of 5, per backend (--skip-run leaves it out).
  (g) where one `depthmask run` of the dataset (first backend) spends its CPU, by shared object
      (perf record; skipped without perf; --skip-run leaves it out).

    python3 bench/pool/ceilings.py --sizes 640x480 --frames 300 --workers 2
    python3 bench/pool/ceilings.py --quick       # small counts: a check that it runs, not a measurement

Prints the machine and a markdown table last; --json writes everything.
"""

import argparse
import ctypes.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import _common as c


def best_of(repeat, fn):
    """fn() returns seconds; the smallest of repeat calls."""
    return min(fn() for _ in range(repeat))


def split(items, n):
    return [items[i::n] for i in range(n)]


def in_threads(n, fn, parts):
    """Wall seconds for n threads, each running fn on its part."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as ex:
        list(ex.map(fn, parts))
    return time.perf_counter() - t0


# (a) ------------------------------------------------------------------------------------------------
def write_files(folder, names, payload):
    pid = os.getpid()
    for i, name in enumerate(names):
        tmp = os.path.join(folder, f".{name}.tmp-{pid}-{i}")
        with open(tmp, "wb") as f:
            f.write(payload)
        os.rename(tmp, os.path.join(folder, name))


def ceiling_write(scratch, w, h, files, threads, repeat):
    payload = os.urandom(w * h * 4 + 1024)
    names = [f"{i:06d}.tiff" for i in range(files)]
    out = {}
    for n in sorted({1, threads}):
        def once():
            folder = scratch.fresh("write-ceiling")
            os.makedirs(folder)
            seconds = in_threads(n, lambda part: write_files(folder, part, payload), split(names, n))
            shutil.rmtree(folder, ignore_errors=True)
            return seconds
        s = best_of(repeat, once)
        out[n] = {"seconds": s, "files_per_s": files / s, "mb_per_s": files * len(payload) / s / 1e6}
    return {"file_bytes": len(payload), "files": files, "by_threads": out}


# (b) ------------------------------------------------------------------------------------------------
def ceiling_list_open(data, threads, repeat):
    dirs = [os.path.join(data, "depth"), os.path.join(data, "mask")]

    def listing():
        t0 = time.perf_counter()
        count = sum(1 for d in dirs for e in os.scandir(d) if e.is_file())
        return time.perf_counter() - t0, count

    runs = [listing() for _ in range(repeat)]
    files = runs[0][1]
    scandir_s = min(s for s, _ in runs)
    paths = [os.path.join(d, e.name) for d in dirs for e in os.scandir(d) if e.is_file()]
    nbytes = sum(os.path.getsize(p) for p in paths)

    def read_all(part):
        for p in part:
            with open(p, "rb") as f:
                f.read()

    read_all(paths)  # page cache warm
    opened = {}
    for n in sorted({1, threads}):
        s = best_of(repeat, lambda: in_threads(n, read_all, split(paths, n)))
        opened[n] = {"seconds": s, "files_per_s": len(paths) / s, "mb_per_s": nbytes / s / 1e6}
    return {"files": files, "bytes": nbytes, "scandir_files_per_s": files / scandir_s, "open_read": opened}


# (c) ------------------------------------------------------------------------------------------------
CODEC_CODE = r"""
import json, os, sys, time
import cv2, numpy as np
cv2.setNumThreads(1)
data, frames, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = sorted(n for n in os.listdir(os.path.join(data, "depth")) if n.endswith(".png"))[:frames]
raw = [(np.frombuffer(open(os.path.join(data, "depth", n), "rb").read(), np.uint8),
        np.frombuffer(open(os.path.join(data, "mask", n), "rb").read(), np.uint8)) for n in names]
def per_frame(fn):
    # Wall and CPU time (this process: one thread works) a frame, each the least of the repeats.
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(len(raw)):
            fn(i)
        wall = min(wall, (time.perf_counter() - t0) / len(raw))
        cpu = min(cpu, (time.process_time() - c0) / len(raw))
    return wall, cpu
decoded = [None] * len(raw)
def decode(i):
    decoded[i] = (cv2.imdecode(raw[i][0], cv2.IMREAD_UNCHANGED), cv2.imdecode(raw[i][1], cv2.IMREAD_UNCHANGED))
dec = per_frame(decode)
out = [None] * len(raw)
def rule(i):
    d, m = decoded[i]
    metres = d.astype(np.float32) * np.float32(0.001)
    out[i] = np.where((m > 0) & (metres >= 0.0) & (metres <= 2.0), metres, np.float32(0))
rul = per_frame(rule)
size = [0]
def encode(i):
    ok, buf = cv2.imencode(".tiff", out[i])
    size[0] = len(buf)
enc = per_frame(encode)
print(json.dumps({"frames": len(raw), "decode_s": dec[0], "rule_s": rul[0], "encode_s": enc[0],
                  "decode_cpu_s": dec[1], "rule_cpu_s": rul[1], "encode_cpu_s": enc[1], "tiff_bytes": size[0],
                  "depth_dtype": str(decoded[0][0].dtype), "mask_dtype": str(decoded[0][1].dtype)}))
"""


def ceiling_codec(python, data, frames, repeat, threads):
    p = subprocess.run([python, "-c", CODEC_CODE, data, str(frames), str(repeat)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"the codec measurement failed in {python}:\n{p.stderr[-3000:]}")
    r = json.loads(p.stdout)
    # From CPU time: what `threads` cores of their own would give (on a shared machine the wall time
    # also counts the waits for a core).
    r["codec_bound_fps"] = threads / (r["decode_cpu_s"] + r["encode_cpu_s"])
    r["pool_compute_bound_fps"] = threads / (r["decode_cpu_s"] + r["rule_cpu_s"] + r["encode_cpu_s"])
    return r


# (d) ------------------------------------------------------------------------------------------------
CUDA_DRIVER_CODE = r"""
import ctypes, json, time
t0 = time.perf_counter()
try:
    cu = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    print(json.dumps({"skip": f"no libcuda.so.1 ({e})"})); raise SystemExit
t1 = time.perf_counter()
rc = cu.cuInit(0)
t2 = time.perf_counter()
if rc != 0:
    print(json.dumps({"skip": f"cuInit returned {rc} (no usable GPU)"})); raise SystemExit
n = ctypes.c_int(0)
cu.cuDeviceGetCount(ctypes.byref(n))
if n.value == 0:
    print(json.dumps({"skip": "cuInit succeeded but there is no device"})); raise SystemExit
dev = ctypes.c_int(0)
t3 = time.perf_counter()
rc = cu.cuDeviceGet(ctypes.byref(dev), 0)
t4 = time.perf_counter()
ctx = ctypes.c_void_p()
rc2 = cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
t5 = time.perf_counter()
if rc or rc2:
    print(json.dumps({"skip": f"cuDeviceGet {rc}, cuDevicePrimaryCtxRetain {rc2}"})); raise SystemExit
cu.cuDevicePrimaryCtxRelease(dev)
print(json.dumps({"dlopen_s": t1 - t0, "cuInit_s": t2 - t1, "cuDeviceGet_s": t4 - t3,
                  "cuDevicePrimaryCtxRetain_s": t5 - t4, "devices": n.value}))
"""

CUDART_CODE = r"""
import ctypes, json, sys, time
t0 = time.perf_counter()
try:
    rt = ctypes.CDLL(sys.argv[1])
except OSError as e:
    print(json.dumps({"skip": f"cannot load {sys.argv[1]} ({e})"})); raise SystemExit
t1 = time.perf_counter()
rc = rt.cudaFree(ctypes.c_void_p(0))
t2 = time.perf_counter()
if rc != 0:
    print(json.dumps({"skip": f"cudaFree(0) returned {rc}"})); raise SystemExit
print(json.dumps({"dlopen_s": t1 - t0, "first_call_cudaFree0_s": t2 - t1}))
"""


def find_cudart(depthmask):
    """The libcudart depthmask links (ldd), else the one the loader finds by name."""
    try:
        out = subprocess.run(["ldd", depthmask], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        m = re.search(r"libcudart\.so[.\d]*\s*=>\s*(\S+)", out)
        if m:
            return m.group(1)
    except OSError:
        pass
    name = ctypes.util.find_library("cudart")  # via ldconfig's cache
    if name:
        return name
    lib = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64", "libcudart.so")
    return lib if os.path.exists(lib) else None


def best_fresh_process(code, argv, repeat):
    """Runs code in fresh interpreters repeat times; per key the smallest value (or the skip reason)."""
    best = None
    for _ in range(repeat):
        p = subprocess.run([sys.executable, "-c", code] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        try:
            r = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"skip": f"the probe failed (exit {p.returncode}): {p.stderr.strip()[-300:]}"}
        if "skip" in r:
            return r
        best = r if best is None else {k: min(v, r[k]) if isinstance(v, float) else v for k, v in best.items()}
    return best


def ceiling_cuda(depthmask, repeat):
    out = {"driver": best_fresh_process(CUDA_DRIVER_CODE, [], repeat)}
    cudart = find_cudart(depthmask)
    if "skip" in out["driver"]:
        out["runtime"] = {"skip": "no usable GPU (see the driver)"}
    elif not cudart:
        out["runtime"] = {"skip": "no libcudart (not linked by depthmask, not in ldconfig's cache nor $CUDA_HOME/lib64)"}
    else:
        out["runtime"] = best_fresh_process(CUDART_CODE, [cudart], repeat)
        out["runtime"]["library"] = cudart
    return out


# (e) ------------------------------------------------------------------------------------------------
def tsc_mhz():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":")[1])
    except (OSError, ValueError):
        pass
    return None


def loader_statistics(depthmask, runs):
    env = dict(os.environ, LD_DEBUG="statistics")
    keys = {"total startup time in dynamic loader": "startup_cycles", "time needed for relocation": "relocation_cycles",
            "time needed to load objects": "load_objects_cycles", "number of relocations": "relocations",
            "number of relocations from cache": "relocations_from_cache",
            "number of relative relocations": "relative_relocations"}
    best = {}
    for _ in range(runs):
        p = subprocess.run([depthmask, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env)
        seen = {}
        for line in p.stderr.splitlines():  # LD_DEBUG writes to stderr, "PID:\tkey: value ..."
            m = re.match(r"\s*\d+:\s+(.*?):\s+(\d+)", line)
            if m and m.group(1).strip() in keys and keys[m.group(1).strip()] not in seen:
                seen[keys[m.group(1).strip()]] = int(m.group(2))
        for k, v in seen.items():
            best[k] = min(best.get(k, v), v) if k.endswith("_cycles") else v
    if not best:
        return {"skip": "LD_DEBUG=statistics printed nothing (not glibc, or a static binary)"}
    mhz = tsc_mhz()
    if mhz:
        for k in ("startup_cycles", "relocation_cycles", "load_objects_cycles"):
            if k in best:
                best[k.replace("_cycles", "_ms")] = best[k] / (mhz * 1e3)
        best["cycles_per_us_assumed"] = mhz
    return best


def shared_libraries(depthmask):
    try:
        out = subprocess.run(["ldd", depthmask], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        return sum(1 for line in out.splitlines() if "=>" in line or line.strip().startswith("/"))
    except OSError:
        return None


def perf_by_dso(cmd, scratch):
    """Where a process's CPU samples fall, by shared object (perf record; {"skip": why} without perf
    or its permission): CPU time, which the wall clock of a shared machine is not."""
    perf = shutil.which("perf")
    if not perf:
        return {"skip": "no perf"}
    data = scratch.path("perf.data")
    rec = subprocess.run([perf, "record", "-q", "-F", "4999", "-o", data, "--"] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if rec.returncode != 0:
        return {"skip": f"perf record failed: {rec.stderr.strip()[-200:]}"}
    rep = subprocess.run([perf, "report", "-i", data, "--sort", "dso", "--stdio", "-q"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    os.remove(data)
    shares = {}
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)", line)
        if m:
            shares[m.group(2)] = float(m.group(1))
    if not shares:
        return {"skip": "perf report gave no samples"}
    return {"top_dsos": sorted(shares.items(), key=lambda kv: -kv[1])[:8]}


def loader_share_perf(depthmask, scratch):
    """The dynamic loader's share of `depthmask --version`'s CPU samples (LD_DEBUG's cycle counts are
    TSC time, not CPU time)."""
    r = perf_by_dso([depthmask, "--version"], scratch)
    if "skip" not in r:
        r["loader_percent"] = sum(v for k, v in r["top_dsos"] if k.startswith("ld-"))
    return r


def ceiling_start(args, runs, scratch):
    version_runs = [c.timed_process([args.depthmask, "--version"])[:2] for _ in range(runs)]
    version = min(w for w, _ in version_runs)
    py_bare = best_of(runs, lambda: c.timed_process([args.python, "-c", "pass"])[0])
    py_imports = best_of(runs, lambda: c.timed_process([args.python, "-c", "import numpy, cv2"])[0])
    return {"depthmask_version_s": version, "depthmask_version_cpu_s": min(t for _, t in version_runs), "loader": loader_statistics(args.depthmask, runs),
            "shared_libraries": shared_libraries(args.depthmask),
            "loader_share_perf": loader_share_perf(args.depthmask, scratch), "python_bare_s": py_bare,
            "python_import_numpy_cv2_s": py_imports}


# (f) ------------------------------------------------------------------------------------------------
def ceiling_one_frame(args, scratch, w, h, backends, runs):
    data = scratch.path(f"data-{w}x{h}-1")
    c.synth(args.depthmask, data, 1, w, h)
    c.warm(data)
    out = {}
    for b in backends:
        times = []
        for _ in range(runs):
            folder = scratch.fresh("one-frame-out")
            s, _, p = c.timed_process([args.depthmask, "run", "-i", data, "-o", folder, "-b", b])
            ok = p.returncode == 0 and os.path.exists(os.path.join(folder, "000000.tiff"))
            shutil.rmtree(folder, ignore_errors=True)
            if not ok:
                out[b] = {"failed": f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}"}
                break
            times.append(s)
        else:
            out[b] = {"seconds": min(times)}
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    c.add_common_options(ap)
    ap.add_argument("--codec-frames", type=int, default=16, help="frames the codec timing cycles over (default 16)")
    ap.add_argument("--skip-run", action="store_true", help="leave out (f), the one-frame runs")
    ap.add_argument("--quick", action="store_true",
                    help="64x48, 8 frames, one repeat, 3 process starts: checks the script, measures little")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.frames, args.repeat = "64x48", "8", 1
    starts = 3 if args.quick else 10
    one_frame_runs = 1 if args.quick else 5
    backends = c.split_list(args.backends)
    cases = c.parse_sizes(args)
    threads = max(1, args.workers)
    failures = []

    with c.Scratch(args) as scratch:
        info = c.machine(args, scratch.root)
        print("machine:", c.machine_line(info), flush=True)
        sizes = []
        for (w, h), frames in cases:
            pressure = c.cpu_pressure()
            data = scratch.path(f"data-{w}x{h}-{frames}")
            c.require_free(scratch.root, int(w * h * frames * 4.6) + (64 << 20))
            print(f"{w}x{h}: synthesising {frames} frames ...", flush=True)
            c.synth(args.depthmask, data, frames, w, h)
            c.warm(data)
            row = {"size": f"{w}x{h}", "frames": frames, "cpu_pressure_before": pressure}
            print(f"{w}x{h}: (a) writes", flush=True)
            row["write"] = ceiling_write(scratch, w, h, frames, threads, args.repeat)
            print(f"{w}x{h}: (b) listing and opening", flush=True)
            row["list_open"] = ceiling_list_open(data, threads, args.repeat)
            print(f"{w}x{h}: (c) codecs", flush=True)
            row["codec"] = ceiling_codec(args.python, data, min(frames, args.codec_frames), args.repeat, threads)
            if not args.skip_run:
                print(f"{w}x{h}: (f) one-frame runs", flush=True)
                row["one_frame_run"] = ceiling_one_frame(args, scratch, w, h, backends, one_frame_runs)
                failures += [f"{w}x{h} one-frame run, {b}: {r['failed']}"
                             for b, r in row["one_frame_run"].items() if "failed" in r]
            if not args.skip_run:
                print(f"{w}x{h}: (g) where a run's CPU goes (perf)", flush=True)
                out = scratch.fresh("profile-out")
                row["run_profile"] = perf_by_dso([args.depthmask, "run", "-i", data, "-o", out, "-b", backends[0]],
                                                 scratch)
                row["run_profile"]["backend"] = backends[0]
                shutil.rmtree(out, ignore_errors=True)
            if not args.keep:
                shutil.rmtree(data, ignore_errors=True)
            row["cpu_pressure_after"] = c.cpu_pressure()
            sizes.append(row)
        print("(d) CUDA start", flush=True)
        cuda = ceiling_cuda(args.depthmask, max(1, min(args.repeat, 5)))
        print("(e) process start", flush=True)
        start = ceiling_start(args, starts, scratch)

    doc = {"machine": info, "repeat": args.repeat, "threads": threads, "sizes": sizes, "cuda": cuda,
           "start": start, "failures": failures}
    c.write_json(args.json, doc)

    n = threads
    rows = []
    for r in sizes:
        s, wr, lo, co = r["size"], r["write"], r["list_open"], r["codec"]
        rows.append((f"(a) write temp + rename, {wr['file_bytes'] / 1e6:.2f} MB files x {wr['files']}", s,
                     "{:.0f} MB/s, {:.0f} files/s".format(wr["by_threads"][1]["mb_per_s"], wr["by_threads"][1]["files_per_s"]),
                     "{:.0f} MB/s, {:.0f} files/s".format(wr["by_threads"][n]["mb_per_s"], wr["by_threads"][n]["files_per_s"])))
        rows.append((f"(b) os.scandir depth/ + mask/ ({lo['files']} files)", s,
                     f"{lo['scandir_files_per_s']:.0f} files/s", ""))
        rows.append((f"(b) open + read every input ({lo['bytes'] / lo['files'] / 1e3:.0f} kB a file, cached)", s,
                     "{:.0f} files/s, {:.0f} MB/s".format(lo["open_read"][1]["files_per_s"], lo["open_read"][1]["mb_per_s"]),
                     "{:.0f} files/s, {:.0f} MB/s".format(lo["open_read"][n]["files_per_s"], lo["open_read"][n]["mb_per_s"])))
        def ms(key):
            return f"{co[key + '_cpu_s'] * 1e3:.2f} CPU / {co[key + '_s'] * 1e3:.2f} wall"
        rows.append((f"(c) cv2.imdecode depth ({co['depth_dtype']}) + mask ({co['mask_dtype']}), ms a frame", s,
                     ms("decode"), ""))
        rows.append(("(c) NumPy rule (astype, *, compares, where), ms a frame", s, ms("rule"), ""))
        rows.append((f"(c) cv2.imencode .tiff float32 ({co['tiff_bytes'] / 1e6:.2f} MB), ms a frame", s,
                     ms("encode"), ""))
        rows.append(("(c) codec bound threads / (decode + encode), CPU times, frames/s", s,
                     f"{co['codec_bound_fps'] / n:.1f}", f"{co['codec_bound_fps']:.1f}"))
        rows.append(("(c) pool compute bound, + the rule, CPU times, frames/s", s,
                     f"{co['pool_compute_bound_fps'] / n:.1f}", f"{co['pool_compute_bound_fps']:.1f}"))
        pr = r.get("run_profile")
        if pr:
            rows.append((f"(g) depthmask run -b {pr['backend']} of the dataset: CPU samples by object (perf)", s,
                         f"skipped: {pr['skip']}" if "skip" in pr else
                         ", ".join(f"{k} {v:.1f} %" for k, v in pr["top_dsos"][:6]), ""))
        for b, fr in r.get("one_frame_run", {}).items():
            rows.append((f"(f) depthmask run, 1 frame, -b {b}, best of {one_frame_runs}, ms", s,
                         f"{fr['seconds'] * 1e3:.1f}" if "seconds" in fr else "failed", ""))
    drv, rt = cuda["driver"], cuda["runtime"]
    if "skip" in drv:
        rows.append(("(d) CUDA driver start", "", f"skipped: {drv['skip']}", ""))
    else:
        for k in ("dlopen_s", "cuInit_s", "cuDeviceGet_s", "cuDevicePrimaryCtxRetain_s"):
            rows.append((f"(d) {k[:-2]} (libcuda.so.1, fresh process), ms", "", f"{drv[k] * 1e3:.2f}", ""))
    if "skip" in rt:
        rows.append(("(d) CUDA runtime first call", "", f"skipped: {rt['skip']}", ""))
    else:
        rows.append(("(d) dlopen libcudart, ms", "", f"{rt['dlopen_s'] * 1e3:.2f}", ""))
        rows.append(("(d) cudaFree(0), the runtime's first call, ms", "", f"{rt['first_call_cudaFree0_s'] * 1e3:.2f}", ""))
    rows.append((f"(e) depthmask --version, wall / CPU (user + sys), best of {starts}, ms", "",
                 f"{start['depthmask_version_s'] * 1e3:.1f} / {start['depthmask_version_cpu_s'] * 1e3:.1f}", ""))
    ld = start["loader"]
    if "skip" in ld:
        rows.append(("(e) loader statistics", "", f"skipped: {ld['skip']}", ""))
    else:
        mhz = ld.get("cycles_per_us_assumed")
        for k, label in (("startup", "loader total"), ("relocation", "relocation"), ("load_objects", "loading objects")):
            if f"{k}_cycles" in ld:
                ms = f" = {ld[k + '_ms']:.1f} ms" if f"{k}_ms" in ld else ""
                rows.append((f"(e) {label} (LD_DEBUG=statistics, best of {starts})", "",
                             f"{ld[k + '_cycles'] / 1e6:.1f} M cycles{ms}", ""))
        rows.append(("(e) relocations (symbol / relative), shared libraries loaded", "",
                     f"{ld.get('relocations')} / {ld.get('relative_relocations')}, {start['shared_libraries']} libraries",
                     f"cycles at {mhz} MHz (cpuinfo)" if mhz else ""))
    lp = start["loader_share_perf"]
    rows.append(("(e) depthmask --version: CPU samples in the dynamic loader (perf, by object)", "",
                 f"skipped: {lp['skip']}" if "skip" in lp else f"{lp['loader_percent']:.1f} %",
                 "" if "skip" in lp else ", ".join(f"{k} {v:.1f} %" for k, v in lp["top_dsos"][:3])))
    rows.append((f"(e) pool interpreter: python -c pass / import numpy, cv2, best of {starts}, ms", "",
                 f"{start['python_bare_s'] * 1e3:.1f} / {start['python_import_numpy_cv2_s'] * 1e3:.1f}", ""))

    print()
    print(f"Ceilings, best of {args.repeat} (process starts best of {starts}); N = {n} threads. {c.machine_line(info)}")
    print()
    print(f"| ceiling | size | 1 thread | {n} threads |")
    print("|---|---|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
