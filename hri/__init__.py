"""hri: a behaviour-tree human-robot interaction simulator.

The shared core lives here (geometry, safety zones, behaviour-tree runtime and loaders,
simulation loop, statistics, command line); the person is in :mod:`hri.actor` (folder
``actor/``), the robot in :mod:`hri.robot` (folder ``robot/``).
"""

import os as _os

__version__ = "0.1.0"

# Installed, the top-level folders actor/, robot/, trees/, scenarios/, assets/ are inside this
# package. In a source checkout they stand beside it; Python started in the checkout's root
# finds this folder first, so let its sub-packages be found there too.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(__file__), "actor")) and all(
        _os.path.isfile(_os.path.join(_checkout, name, "__init__.py")) for name in ("actor", "robot")):
    __path__.append(_checkout)  # type: ignore[name-defined]  # noqa: F821

# before anything imports numpy: one BLAS kernel on every x86-64 machine, so that a seed gives
# the same run bit for bit on any of them (hri.base.blas)
from hri.base.blas import pin_kernel as _pin_kernel  # noqa: E402

_pin_kernel()
