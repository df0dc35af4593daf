"""hri: a behaviour-tree human-robot interaction simulator.

The shared core lives here (geometry, safety zones, behaviour-tree runtime and loaders,
simulation loop, statistics, command line); the person is in :mod:`hri.actor` (folder
``actor/``), the robot in :mod:`hri.robot` (folder ``robot/``).
"""

__version__ = "0.1.0"
