"""One Masker from 8 threads at once (ctypes releases the GIL for each call): every result equals
the serial one; runs on several threads at once complete."""

from __future__ import annotations

import concurrent.futures as cf

import numpy as np

import depthmask
from reference import bits


def test_eight_threads_one_masker():
    rng = np.random.default_rng(3)
    frames = [(rng.integers(0, 3000, (97, 131), dtype=np.uint16), rng.integers(0, 4, (97, 131), dtype=np.uint8))
              for _ in range(16)]
    cfg = {"depth": {"max": 2.5}, "mask": {"labels": [1, 3], "erode": 1}}
    with depthmask.Masker(cfg, overrides={"backend.kind": "cpu"}) as m:
        serial = [bits(m.mask(d, k)) for d, k in frames]
        with cf.ThreadPoolExecutor(8) as pool:
            for _ in range(4):
                results = list(pool.map(lambda f: bits(m.mask(*f)), frames))
                assert all(np.array_equal(a, b) for a, b in zip(results, serial))


def test_runs_on_several_threads(sample, tmp_path):
    def one(i):
        return depthmask.run(sample / "depthmask.yaml", output=tmp_path / str(i), overrides={"backend.kind": "cpu"})

    with cf.ThreadPoolExecutor(3) as pool:
        summaries = list(pool.map(one, range(3)))
    assert [s["ok"] for s in summaries] == [8, 8, 8]


def test_close_waits_for_calls_in_flight():
    m = depthmask.Masker(overrides={"backend.kind": "cpu"})
    big = np.ones((2000, 2000), np.uint16), np.ones((2000, 2000), np.uint8)
    with cf.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(m.mask, *big) for _ in range(8)]
        m.close()
        done = [f for f in futures if f.exception() is None]
        refused = [f for f in futures if isinstance(f.exception(), depthmask.InputError)]
    assert len(done) + len(refused) == 8
    assert m.closed
