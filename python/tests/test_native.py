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

HEADER = "lib/api/include/depthmask/depthmask_c.h"


def test_dm_image_layout_matches_header(source_tree, tmp_path):
    repo = source_tree
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
    subprocess.run([cc, "-std=c99", "-I", str(repo / "lib" / "api" / "include"), str(src), "-o", str(exe)], check=True)
    got = dict(line.split() for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    assert int(got["size"]) == ctypes.sizeof(_native.DmImage)
    for f in fields:
        assert int(got[f]) == getattr(_native.DmImage, f).offset, f


def test_every_header_function_is_declared(source_tree):
    repo = source_tree
    declared = set(re.findall(r"DM_API\s+[\w\s\*]+?\b(dm_\w+)\s*\(", (repo / HEADER).read_text()))
    assert declared == set(_native._SIGNATURES)


def test_status_codes_match_header(source_tree):
    repo = source_tree
    header = (repo / HEADER).read_text()
    codes = dict((name, int(v)) for name, v in re.findall(r"DM_(ERROR_\w+|OK)\s*=\s*(\d+)", header))
    for cls in (depthmask.InputError, depthmask.ConfigError, depthmask.PlatformError, depthmask.ResourceError,
                depthmask.ShardBusyError, depthmask.InternalError, depthmask.Interrupted):
        assert issubclass(cls, depthmask.Error)
        assert cls.status in codes.values()
    assert len({c.status for c in depthmask.Error.__subclasses__()}) == len(codes) - 1  # all but DM_OK


def test_version_is_the_projects(source_tree):
    repo = source_tree
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


def test_the_library_checks_again():
    # Past the package's own checks, straight through the C ABI: a read-only out is refused by the
    # library too, with DM_ERROR_INPUT and a message.
    import numpy as np

    handle = ctypes.c_void_p()
    assert _native.lib.dm_masker_open(None, None, (ctypes.c_char_p * 1)(b"backend.kind=cpu"), 1, ctypes.byref(handle)) == 0
    try:
        depth, mask, out = np.zeros((4, 5), np.uint16), np.zeros((4, 5), np.uint8), np.zeros((4, 5), np.float32)

        def image(a, dtype, read_only=0):
            return _native.DmImage(a.ctypes.data, _native.MEMORY_HOST, -1, dtype, 2, (4, 5, 0),
                                   (a.strides[0], a.strides[1], 0), read_only, 0)

        d, m = image(depth, _native.DTYPE_UINT16), image(mask, _native.DTYPE_UINT8)
        ok = image(out, _native.DTYPE_FLOAT32)
        assert _native.lib.dm_masker_mask(handle, ctypes.byref(d), ctypes.byref(m), None, ctypes.byref(ok), None) == 0
        assert _native.last_error() == ""
        ro = image(out, _native.DTYPE_FLOAT32, read_only=1)
        assert _native.lib.dm_masker_mask(handle, ctypes.byref(d), ctypes.byref(m), None, ctypes.byref(ro), None) == 1
        assert "read-only" in _native.last_error() or "read only" in _native.last_error()
    finally:
        _native.lib.dm_masker_close(handle)
