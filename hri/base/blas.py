"""One BLAS kernel on every x86-64 machine, so that a seed reproduces a run bit for bit there.

numpy's matrix products go to OpenBLAS, which picks its kernels by the processor it finds: an
Intel processor with AVX-512 gets the ``SkylakeX`` kernels, an AMD one or an older Intel one
the ``Haswell`` ones. Their sums are taken in different orders, so a 4x4 product can differ in
the last bit, and a speed and separation monitoring run, whose controller decides on forward
kinematics of the arm, can decide differently a few steps later: the same seed gave another
run. :func:`pin_kernel` makes OpenBLAS take the ``Haswell`` kernels wherever they run (AVX2 and
FMA, every x86-64 processor since 2013), which are what AMD processors get anyway.

OpenBLAS reads the choice (``OPENBLAS_CORETYPE``) when numpy loads it, so ``hri`` pins it when
it is imported, before it imports numpy: import ``hri`` before numpy in a script of your own.
Elsewhere (another architecture, a processor without AVX2) nothing is pinned.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
import sys

#: the kernels every AVX2 processor runs
KERNEL = "Haswell"
_NEEDS = {"avx2", "fma"}


def pin_kernel() -> bool:
    """Set ``OPENBLAS_CORETYPE`` to :data:`KERNEL` where the processor runs it and numpy has
    not loaded OpenBLAS yet (a value of the user's is replaced: a run must not depend on it);
    whether it was set."""
    if "numpy" in sys.modules or platform.machine() not in ("x86_64", "AMD64") or not _NEEDS <= _cpu_flags():
        return False
    os.environ.setdefault("OPENBLAS_CORETYPE", KERNEL)
    return True


def _cpu_flags() -> set[str]:
    """The first processor's flags in ``/proc/cpuinfo`` (none where there is no such file)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def kernel_in_use() -> str | None:
    """The kernels numpy's OpenBLAS runs (``Haswell``, ``SkylakeX``, ...), asked of the library
    numpy ships; None where numpy uses another BLAS or the library cannot be found."""
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
