"""Which kernels numpy's OpenBLAS runs: seeded runs depend on them in their last bits (the pin is
in ``hri/__init__.py``), so a benchmark's machine record names them."""

from __future__ import annotations

import ctypes
import glob
import os


def kernel_in_use() -> str | None:
    """The kernels numpy's OpenBLAS runs, asked of the library numpy ships (None: not found)."""
    import numpy

    folder = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "libscipy_openblas*.so"))):
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
            function = getattr(library, name, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                return function().decode().strip()
    return None
