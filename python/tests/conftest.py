"""Shared fixtures. The package is found through PYTHONPATH (python/) and the library through
DEPTHMASK_LIBRARY, as ctest sets them (python/CMakeLists.txt); DEPTHMASK_CLI and DEPTHMASK_SHARED_DATA
name the CLI and the real frames for the parity tests, which skip without them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import depthmask

REPO = Path(__file__).resolve().parents[2]


def pytest_report_header(config):
    return [f"depthmask {depthmask.__version__} from {depthmask.library_path} (CUDA built: {depthmask.cuda_built})"]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def source_tree(repo) -> Path:
    """The checkout's sources (the C header, CMakeLists.txt); absent in a bundle of built files."""
    if not (repo / "lib" / "api" / "include" / "depthmask" / "depthmask_c.h").exists() or not (repo / "CMakeLists.txt").exists():
        pytest.skip(f"the source tree is not here ({repo}): the header checks need lib/api/include and CMakeLists.txt")
    return repo


@pytest.fixture(scope="session")
def sample(repo) -> Path:
    """The committed synthetic sample: 8 frames, 16-bit millimetres, label masks."""
    return repo / "data" / "sample"


@pytest.fixture(scope="session")
def shared_data(repo) -> Path:
    """The real frames: DEPTHMASK_SHARED_DATA, else shared/data beside the checkout or inside it."""
    env = os.environ.get("DEPTHMASK_SHARED_DATA")
    candidates = [Path(env)] if env else [repo.parent / "shared" / "data", repo / "shared" / "data"]
    for path in candidates:
        if (path / "apc-vision-toolbox").is_dir():
            return path
    pytest.skip(f"no real frames at {' or '.join(map(str, candidates))} (DEPTHMASK_SHARED_DATA names the folder)")


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("DEPTHMASK_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("DEPTHMASK_CLI does not name the depthmask executable (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def cpu():
    """One cpu-backend Masker with the default configuration, shared by tests that only mask."""
    with depthmask.Masker(overrides={"backend.kind": "cpu"}) as m:
        yield m
