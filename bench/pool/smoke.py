#!/usr/bin/env python3
"""Keeps compare.py and ceilings.py runnable: both on a tiny dataset, seconds, numbers meaningless.

    python3 bench/pool/smoke.py DEPTHMASK [PYTHON]

Exit 77 (ctest's skip) with the reason when PYTHON lacks NumPy or OpenCV; otherwise the scripts'
failure (a run that fails, outputs missing, pixels that differ) fails it.
"""

import os
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    depthmask = sys.argv[1]
    python = sys.argv[2] if len(sys.argv) == 3 else sys.executable
    try:
        p = subprocess.run([python, "-c", "import numpy, cv2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except OSError as e:
        print(f"FAILED: cannot run the interpreter {python}: {e}")
        return 1
    if p.returncode != 0:
        last = (p.stdout.strip().splitlines() or ["unknown error"])[-1]
        print(f"SKIP: {python} cannot import numpy and cv2 ({last}); install python3-numpy python3-opencv")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="dm-pool-smoke-") as work:
        common = ["--depthmask", depthmask, "--python", python, "--workers", "2", "--backends", "cpu"]
        runs = [
            [python, os.path.join(HERE, "compare.py"), "--sizes", "64x48", "--frames", "8", "--repeat", "1",
             "--work", os.path.join(work, "compare"), "--json", os.path.join(work, "compare.json")] + common,
            [python, os.path.join(HERE, "ceilings.py"), "--quick", "--work", os.path.join(work, "ceilings"),
             "--json", os.path.join(work, "ceilings.json")] + common,
        ]
        for cmd in runs:
            print("+", " ".join(cmd), flush=True)
            rc = subprocess.run(cmd).returncode
            if rc != 0:
                print(f"FAILED: exit {rc}: {' '.join(cmd)}", flush=True)
                return 1
            if not os.path.getsize(cmd[cmd.index("--json") + 1]):
                print("FAILED: no JSON written", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
