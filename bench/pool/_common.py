"""What compare.py and ceilings.py share: options, the machine record, datasets, timing whole processes."""

import datetime
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SIZES = "640x480,1920x1080,3840x2160"
DEFAULT_FRAMES = "1024,384,128"


def default_depthmask():
    for candidate in (os.path.join(REPO, "build-cpu", "depthmask"), os.path.join(REPO, "build", "depthmask")):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("depthmask") or "depthmask"


def add_common_options(ap):
    ap.add_argument("--depthmask", default=default_depthmask(), help="the depthmask binary (default: %(default)s)")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter that runs the pool (needs NumPy and OpenCV; default: this one)")
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="frame sizes WxH, comma separated (default: %(default)s)")
    ap.add_argument("--frames", default=DEFAULT_FRAMES,
                    help="frames per size: one number for every size, or one per size (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts (default: 3)")
    ap.add_argument("--backends", default="auto,cpu",
                    help="depthmask backends, comma or space separated (default: auto,cpu; on a GPU: auto,cpu,copy)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="pool processes / threads (default: cpu count)")
    ap.add_argument("--work", default=None, help="scratch folder for datasets and outputs (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder's datasets")
    ap.add_argument("--json", default=None, help="also write the results here as JSON")


def split_list(text):
    return [t for t in text.replace(",", " ").split() if t]


def parse_sizes(args):
    sizes = []
    for s in split_list(args.sizes):
        w, _, h = s.lower().partition("x")
        if not (w.isdigit() and h.isdigit()) or int(w) <= 0 or int(h) <= 0:
            sys.exit(f"bad size {s!r}: expected WIDTHxHEIGHT")
        sizes.append((int(w), int(h)))
    frames = [int(f) for f in split_list(args.frames)]
    if len(frames) == 1:
        frames *= len(sizes)
    if len(frames) != len(sizes) or min(frames) <= 0:
        sys.exit(f"--frames: give one positive count, or one per size ({len(sizes)})")
    return list(zip(sizes, frames))


class Scratch:
    """The --work folder (or a temp dir), removed at the end unless --keep or it was given."""

    def __init__(self, args):
        self.given = args.work is not None
        self.keep = args.keep
        self.root = os.path.abspath(args.work) if self.given else tempfile.mkdtemp(prefix="dm-pool-")
        os.makedirs(self.root, exist_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.given and not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def fresh(self, name):
        p = self.path(name)
        shutil.rmtree(p, ignore_errors=True)
        return p


def require_free(folder, need_bytes):
    free = shutil.disk_usage(folder).free
    if free < need_bytes:
        sys.exit(f"not enough space in {folder}: {free / 1e9:.1f} GB free, about {need_bytes / 1e9:.1f} GB needed "
                 "(choose --work, or fewer --frames)")


def synth(depthmask, folder, frames, w, h):
    """A dataset from `depthmask synth` (deterministic), reused when the folder already holds it."""
    stamp = os.path.join(folder, ".synth-done")
    want = f"{frames} {w}x{h}"
    if os.path.exists(stamp) and open(stamp).read() == want:
        return
    shutil.rmtree(folder, ignore_errors=True)
    run_checked([depthmask, "synth", "-o", folder, "-n", str(frames), "-s", f"{w}x{h}"])
    with open(stamp, "w") as f:
        f.write(want)


def warm(folder):
    """Reads every file under folder once, so runs start with the inputs in the page cache."""
    count = nbytes = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while True:
                    chunk = f.read(1 << 22)
                    if not chunk:
                        break
                    nbytes += len(chunk)
            count += 1
    return count, nbytes


def run_checked(cmd, env=None, timeout=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"failed (exit {p.returncode}): {' '.join(cmd)}")
    return p


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_process(cmd, env=None, timeout=None):
    """One whole process: wall seconds (perf_counter around subprocess.run), CPU seconds (user + sys
    of it and every descendant it waited for: the pool's workers too) and the process. On a shared
    machine the CPU seconds move less than the wall time."""
    c0, t0 = _children_cpu(), time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    except OSError as e:  # e.g. the binary is being relinked: a failed run, not a crash of the bench
        p = subprocess.CompletedProcess(cmd, 127, "", f"cannot start {cmd[0]}: {e}\n")
    wall = time.perf_counter() - t0
    return wall, _children_cpu() - c0, p


def cpu_pressure():
    """/proc/pressure/cpu's "some avg10" (% of the last 10 s that a runnable task waited for a CPU):
    how much the machine was shared while measuring. None where the kernel has no PSI."""
    try:
        with open("/proc/pressure/cpu") as f:
            return float(f.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _filesystem(path):
    """The mount (type, device, mount point) that holds path, from /proc/mounts."""
    best = ("", "", "")
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype = line.split()[:3]
                if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) > len(best[2]):
                    best = (fstype, dev, mnt)
    except OSError:
        pass
    return {"type": best[0], "device": best[1], "mount": best[2]}


def _gpus():
    if not shutil.which("nvidia-smi"):
        return []
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
        return [line.strip() for line in p.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        return []


def _sha256(path):
    """Which binary was measured (a build folder's binary changes under a rebuild)."""
    try:
        with open(shutil.which(path) or path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def interpreter_versions(python):
    """Python, NumPy and OpenCV versions of the pool's interpreter (None where one is missing)."""
    code = ("import json, sys\n"
            "v = {'python': sys.version.split()[0], 'numpy': None, 'cv2': None}\n"
            "try:\n import numpy; v['numpy'] = numpy.__version__\nexcept ImportError: pass\n"
            "try:\n import cv2; v['cv2'] = cv2.__version__\nexcept ImportError: pass\n"
            "print(json.dumps(v))")
    try:
        p = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return json.loads(p.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return {"python": None, "numpy": None, "cv2": None, "error": str(e)}


def machine(args, scratch_root):
    try:
        version = subprocess.run([args.depthmask, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=60).stdout.strip()
    except OSError as e:
        version = f"not runnable: {e}"
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": _cpu_model(),
        "mem_total_gib": _mem_total_gib(),
        "kernel": platform.release(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "cpu_pressure_some_avg10_start": cpu_pressure(),
        "gpus": _gpus(),
        "depthmask": os.path.abspath(args.depthmask) if os.path.exists(args.depthmask) else args.depthmask,
        "depthmask_version": version,
        "depthmask_sha256": _sha256(args.depthmask),
        "pool_python": args.python,
        "pool_versions": interpreter_versions(args.python),
        "driver_python": sys.version.split()[0],
        "work_filesystem": _filesystem(scratch_root),
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
    }


def machine_line(m):
    v = m["pool_versions"]
    gpu = "; ".join(m["gpus"]) or "no GPU"
    fs = m["work_filesystem"]
    return (f"{m['date_utc']} UTC, {m['nproc']} CPUs ({m['cpu_model']}), {m['mem_total_gib']} GiB, {gpu}; "
            f"load at start {m['loadavg_start']}, CPU pressure {m['cpu_pressure_some_avg10_start']} %; depthmask {m['depthmask_version']} ({m['depthmask']}); "
            f"pool: Python {v.get('python')} NumPy {v.get('numpy')} OpenCV {v.get('cv2')} ({m['pool_python']}); "
            f"scratch on {fs['type']} ({fs['mount']})")


def write_json(path, doc):
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
