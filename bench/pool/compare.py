#!/usr/bin/env python3
"""`depthmask run` beside the process-pool baseline (pool_baseline.py), whole processes, one run.

For each size: a dataset from `depthmask synth -n FRAMES -s WxH`, its files read once (page cache
warm), then, --repeat times in turn (the runs of one round interleaved, so drift of a shared machine
hits every contender alike): `depthmask run -i DATA -o OUT -b BACKEND` for each backend and
`PYTHON pool_baseline.py DATA OUT --workers N`, each as one whole process timed by wall clock
(perf_counter around subprocess.run) into a fresh empty OUT that is removed after. The best run
counts. Every run must exit 0 and leave one .tiff per frame; one frame's pixels from each contender
are compared with the pool's.

    python3 bench/pool/compare.py --sizes 640x480 --frames 300 --workers 2 --backends cpu
    python3 bench/pool/compare.py --backends auto,cpu,copy --json compare.json     # the GPU machine

Prints the machine and a markdown table last; --json writes everything.
"""

import argparse
import os
import shutil
import sys

import _common as c


def count_tiffs(folder):
    try:
        return sum(1 for n in os.listdir(folder) if n.endswith(".tiff"))
    except FileNotFoundError:
        return 0


def same_pixels(a_path, b_path):
    """True/False when both files decode (OpenCV in this interpreter), None when they cannot be compared."""
    try:
        import cv2
    except ImportError:
        return None
    a, b = cv2.imread(a_path, cv2.IMREAD_UNCHANGED), cv2.imread(b_path, cv2.IMREAD_UNCHANGED)
    if a is None or b is None:
        return None
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    c.add_common_options(ap)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one run may take (default: 1800)")
    args = ap.parse_args()
    backends = c.split_list(args.backends)
    cases = c.parse_sizes(args)
    pool_script = os.path.join(c.HERE, "pool_baseline.py")
    failures = []
    results = []

    with c.Scratch(args) as scratch:
        info = c.machine(args, scratch.root)
        print("machine:", c.machine_line(info), flush=True)
        for (w, h), frames in cases:
            data = scratch.path(f"data-{w}x{h}-{frames}")
            # Input about 0.3 + output 4 bytes per pixel, plus the pixel checks' two kept outputs.
            c.require_free(scratch.root, int(w * h * frames * 4.6) + 2 * w * h * 4 * 4 + (64 << 20))
            print(f"{w}x{h}: synthesising {frames} frames ...", flush=True)
            c.synth(args.depthmask, data, frames, w, h)
            files, nbytes = c.warm(data)
            contenders = [(f"depthmask {b}", [args.depthmask, "run", "-i", data, "-b", b, "-o"]) for b in backends]
            contenders.append(("pool", [args.python, pool_script, data, "--workers", str(args.workers)]))
            times = {name: [] for name, _ in contenders}
            cpu = {name: [] for name, _ in contenders}
            kept = {}  # the last round's outputs, for the pixel check
            load_before, pressure_before = os.getloadavg()[0], c.cpu_pressure()
            for r in range(args.repeat):
                for name, cmd in contenders:
                    out = scratch.fresh(f"out-{len(kept)}")
                    full = cmd + [out] if name != "pool" else cmd[:3] + [out] + cmd[3:]
                    seconds, cpu_s, p = c.timed_process(full, timeout=args.timeout)
                    written = count_tiffs(out)
                    ok = p.returncode == 0 and written == frames
                    if not ok:
                        failures.append(f"{w}x{h} {name}: exit {p.returncode}, {written}/{frames} outputs")
                        sys.stderr.write(f"--- {' '.join(full)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}\n")
                    else:
                        times[name].append(seconds)
                        cpu[name].append(cpu_s)
                    print(f"  {name:20s} round {r + 1}: {seconds:8.3f} s  {frames / seconds:9.1f} frames/s"
                          f"  (CPU {cpu_s:7.3f} s)"
                          f"{'' if ok else '  FAILED'}", flush=True)
                    if r == args.repeat - 1 and ok:
                        kept[name] = out  # kept until the check below
                    else:
                        shutil.rmtree(out, ignore_errors=True)
            load_after, pressure_after = os.getloadavg()[0], c.cpu_pressure()
            # Pixels: the first, middle and last frame of each depthmask backend against the pool's.
            pixels = {}
            if "pool" in kept:
                names = sorted(n for n in os.listdir(kept["pool"]) if n.endswith(".tiff"))
                sample = sorted({names[0], names[len(names) // 2], names[-1]})
                for name, out in kept.items():
                    if name != "pool":
                        checks = [same_pixels(os.path.join(out, n), os.path.join(kept["pool"], n)) for n in sample]
                        pixels[name] = None if None in checks else all(checks)
                        if pixels[name] is False:
                            failures.append(f"{w}x{h} {name}: output pixels differ from the pool's ({sample})")
            for out in kept.values():
                shutil.rmtree(out, ignore_errors=True)
            if not args.keep:
                shutil.rmtree(data, ignore_errors=True)
            fps = {name: (frames / min(t) if t else None) for name, t in times.items()}
            row = {"size": f"{w}x{h}", "frames": frames, "workers": args.workers, "input_files": files,
                   "input_bytes": nbytes, "seconds": times, "cpu_seconds": cpu, "fps": fps,
                   "cpu_ms_per_frame": {n: (min(t) * 1e3 / frames if t else None) for n, t in cpu.items()},
                   "pixels_equal_pool": pixels,
                   "loadavg_1min_before_after": [round(load_before, 2), round(load_after, 2)],
                   "cpu_pressure_before_after": [pressure_before, pressure_after]}
            dm = {b: fps[f"depthmask {b}"] for b in backends if fps[f"depthmask {b}"]}
            pool = fps["pool"]
            row["best_backend"] = max(dm, key=dm.get) if dm else None
            row["ratio_best_pool"] = dm[row["best_backend"]] / pool if dm and pool else None
            row["ratio_cpu_pool"] = dm["cpu"] / pool if "cpu" in dm and pool else None
            results.append(row)

    doc = {"machine": info, "repeat": args.repeat, "workers": args.workers, "backends": backends,
           "results": results, "failures": failures}
    c.write_json(args.json, doc)

    def f(x, fmt="{:.1f}"):
        return fmt.format(x) if x is not None else "—"

    print()
    print(f"Whole processes, wall clock, best of {args.repeat}; pool = {os.path.basename(args.python)} "
          f"pool_baseline.py --workers {args.workers}. {c.machine_line(info)}")
    print()
    head = ["size", "frames"] + [f"{b} fps" for b in backends] + ["pool fps", "best/pool", "cpu/pool", "pixels = pool"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 3) + ["---"]) + "|")
    for row in results:
        cells = [row["size"], str(row["frames"])] + [f(row["fps"][f"depthmask {b}"]) for b in backends]
        best = f(row["ratio_best_pool"], "{:.2f}x") + (f" ({row['best_backend']})" if row["best_backend"] else "")
        eq = ", ".join(f"{k.split()[-1]}: {'yes' if v else 'no' if v is False else '?'}"
                       for k, v in row["pixels_equal_pool"].items()) or "—"
        cells += [f(row["fps"]["pool"]), best, f(row["ratio_cpu_pool"], "{:.2f}x"), eq]
        print("| " + " | ".join(cells) + " |")
    # CPU time per frame: on a shared machine wall time says how long a run waited, CPU time what it cost.
    names = [f"depthmask {b}" for b in backends] + ["pool"]
    print()
    print("CPU time per frame, ms (user + sys of the whole process tree, least of the runs), and how shared the"
          " machine was (CPU pressure some avg10 %, before / after):")
    print()
    print("| size | " + " | ".join(n.replace("depthmask ", "") for n in names) + " | pool/cpu | CPU pressure |")
    print("|---|" + "---:|" * len(names) + "---:|---|")
    for row in results:
        ms = row["cpu_ms_per_frame"]
        ratio = ms["pool"] / ms["depthmask cpu"] if ms.get("depthmask cpu") and ms["pool"] else None
        pb, pa = row["cpu_pressure_before_after"]
        print("| " + " | ".join([row["size"]] + [f(ms[n], "{:.2f}") for n in names] + [f(ratio, "{:.2f}x"),
                                                                                      f"{pb} / {pa}"]) + " |")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
