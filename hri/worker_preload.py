"""Imported once by the forkserver that starts a batch's local worker processes.

Every worker is forked from that server, so it starts with PyBullet, NumPy, py_trees and the
simulator imported and the person's clips built (``ClipLibrary.default()``), instead of doing
that itself: about 0.9 s a worker, which a short batch pays in full. Nothing is connected or
opened here: a PyBullet client and the run's queues are made in the worker, for its runs only.
"""

from hri.quiet import import_pybullet_quietly

import_pybullet_quietly()  # before hri.sim imports it: no build-time banner on the parent's stdout

import hri.batch  # noqa: E402,F401
import hri.sim  # noqa: E402,F401
from hri.actor.animation import ClipLibrary  # noqa: E402

ClipLibrary.default()  # read-only once built, cached per process: the workers inherit it
