"""hri: a behaviour-tree human-robot interaction simulator.

The shared core lives here (geometry, safety zones, behaviour-tree runtime and loaders,
simulation loop, statistics, command line); the person is in :mod:`hri.actor` (folder
``actor/``), the robot in :mod:`hri.robot` (folder ``robot/``).
"""

import os as _os
import platform as _platform
import sys as _sys

__version__ = "0.1.0"

# Installed, the top-level folders actor/, robot/, trees/, scenarios/, assets/ are inside this
# package. In a source checkout they stand beside it; Python started in the checkout's root
# finds this folder first, so let its sub-packages be found there too.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "actor")) and all(
        _os.path.isfile(_os.path.join(_checkout, name, "__init__.py")) for name in ("actor", "robot")):
    __path__.append(_checkout)  # type: ignore[name-defined]  # noqa: F821


# One seed, one run, on any x86-64 machine. numpy's OpenBLAS picks its kernels by processor:
# with AVX-512 its SkylakeX kernels, else (AMD, older Intel) its Haswell ones, whose sums
# differ in the last bit; SSM's controller decides on the arm's forward kinematics, so one seed
# gave two runs. OpenBLAS reads OPENBLAS_CORETYPE when numpy loads it, so it is set here, before
# hri imports numpy (a script of one's own imports hri first), to the kernels every processor
# with AVX2 and FMA runs (a value of the user's is replaced: a run must not depend on it).
BLAS_KERNEL = "Haswell"


def _cpu_flags() -> set:
    """The first processor's flags in /proc/cpuinfo (none where there is no such file)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


if "numpy" not in _sys.modules and _platform.machine() == "x86_64" and {"avx2", "fma"} <= _cpu_flags():
    _os.environ["OPENBLAS_CORETYPE"] = BLAS_KERNEL
