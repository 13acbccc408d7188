"""depthmask: masked float32 depth maps in metres from depth and mask images, on GPU or CPU.

    import depthmask
    with depthmask.Masker({"depth": {"scale": 0.001, "max": 2.0}}) as m:
        metres = m.mask(depth_u16, mask_u8)         # NumPy in, NumPy out; torch / CuPy likewise
    summary = depthmask.run("depthmask.yaml", input="data/in", output="data/out")

Pure Python over the library's C ABI (ctypes): docs/PYTHON.md.
"""

from __future__ import annotations

from . import _native
from ._errors import (
    ConfigError,
    Error,
    InputError,
    InternalError,
    Interrupted,
    PlatformError,
    ResourceError,
    ShardBusyError,
)
from ._masker import Masker, doctor, run

# The package's own version: the library it loads must be the same release (and its ABI this one's).
_PACKAGE_VERSION = "0.1.0"

__version__ = _native.lib.dm_version().decode()
if _native.lib.dm_abi_version() != _native.ABI_VERSION or __version__ != _PACKAGE_VERSION:
    raise ImportError(
        f"depthmask: the library {_native.path} is version {__version__} (ABI {_native.lib.dm_abi_version()}); "
        f"this package is {_PACKAGE_VERSION} (ABI {_native.ABI_VERSION}): install them from the same build"
    )

library_path: str = _native.path
"""The file of the shared library this package loaded."""

cuda_built: bool = bool(_native.lib.dm_cuda_built())
"""Whether the library was built with CUDA (GPU backends) or is CPU-only."""

from . import _log  # noqa: E402 - after the version check: a wrong library gets no callback
from ._log import set_log_level  # noqa: E402

_log.install()

__all__ = [
    "ConfigError",
    "Error",
    "InputError",
    "InternalError",
    "Interrupted",
    "Masker",
    "PlatformError",
    "ResourceError",
    "ShardBusyError",
    "__version__",
    "cuda_built",
    "doctor",
    "library_path",
    "run",
    "set_log_level",
]
