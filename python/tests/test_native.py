"""The ctypes side of the C ABI: struct layout against the header, declarations, library loading."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import sys

import pytest

import depthmask
from depthmask import _native

HEADER = "lib/include/depthmask/depthmask_c.h"


def test_dm_image_layout_matches_header(repo, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to read dm_image's layout from the header")
    fields = [name for name, _ in _native.DmImage._fields_]
    src = tmp_path / "layout.c"
    src.write_text(
        '#include <stdio.h>\n#include <stddef.h>\n#include "depthmask/depthmask_c.h"\nint main(void) {\n'
        '  printf("size %zu\\n", sizeof(dm_image));\n'
        + "".join(f'  printf("{f} %zu\\n", offsetof(dm_image, {f}));\n' for f in fields)
        + "  return 0;\n}\n"
    )
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c99", "-I", str(repo / "lib" / "include"), str(src), "-o", str(exe)], check=True)
    got = dict(line.split() for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    assert int(got["size"]) == ctypes.sizeof(_native.DmImage)
    for f in fields:
        assert int(got[f]) == getattr(_native.DmImage, f).offset, f


def test_every_header_function_is_declared(repo):
    declared = set(re.findall(r"DM_API\s+[\w\s\*]+?\b(dm_\w+)\s*\(", (repo / HEADER).read_text()))
    assert declared == set(_native._SIGNATURES)


def test_status_codes_match_header(repo):
    header = (repo / HEADER).read_text()
    codes = dict((name, int(v)) for name, v in re.findall(r"DM_(ERROR_\w+|OK)\s*=\s*(\d+)", header))
    for cls in (depthmask.InputError, depthmask.ConfigError, depthmask.PlatformError, depthmask.ResourceError,
                depthmask.InternalError, depthmask.Interrupted):
        assert issubclass(cls, depthmask.Error)
        assert cls.status in codes.values()
    assert len({c.status for c in depthmask.Error.__subclasses__()}) == len(codes) - 1  # all but DM_OK


def test_version_is_the_projects(repo):
    project = re.search(r"project\(depthmask VERSION ([\d.]+)", (repo / "CMakeLists.txt").read_text()).group(1)
    assert depthmask.__version__ == project == depthmask._PACKAGE_VERSION
    assert _native.lib.dm_abi_version() == _native.ABI_VERSION


def _import_with(env_library: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DEPTHMASK_LIBRARY=env_library)
    return subprocess.run([sys.executable, "-c", "import depthmask"], env=env, capture_output=True, text=True)


def test_missing_library_is_a_clear_import_error(tmp_path):
    missing = str(tmp_path / "libdepthmask.so.0")
    r = _import_with(missing)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "DEPTHMASK_LIBRARY" in r.stderr and missing in r.stderr


def test_a_library_that_is_not_depthmask_is_refused():
    libc = ctypes.util.find_library("c")
    if libc is None:
        pytest.skip("no libc to load")
    r = _import_with(libc)
    assert r.returncode != 0 and "has no dm_version" in r.stderr


def test_install_file_is_a_candidate(tmp_path):
    # An installed package: depthmask/_install.py names the library; DEPTHMASK_LIBRARY is not set.
    pkg = tmp_path / "depthmask"
    shutil.copytree(os.path.dirname(depthmask.__file__), pkg, ignore=shutil.ignore_patterns("__pycache__", "_install.py"))
    (pkg / "_install.py").write_text(f"LIBRARY = {depthmask.library_path!r}\n")
    env = {k: v for k, v in os.environ.items() if k != "DEPTHMASK_LIBRARY"}
    env["PYTHONPATH"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", "import depthmask; print(depthmask.library_path)"], env=env,
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == depthmask.library_path
