"""Imported once by the forkserver that starts a batch's local worker processes.

Every worker is forked from that server, so it starts with PyBullet, NumPy, py_trees and the
simulator imported, the person's clips built (``ClipLibrary.default()``), their names read
for the trees' checks (``clip_names()``) and how fast each clip moves the body measured
(``clip_speeds``), instead of doing that itself: about 0.9 s of imports and 0.3 s of
first-run work a worker, which a short batch pays in full. The measuring connects a PyBullet
client of its own and disconnects it before this module is done: nothing connected or open
is forked. A worker's client and its run's queues are made in the worker, for its runs only.
"""

from hri.base.quiet import import_pybullet_quietly

import_pybullet_quietly()  # before hri.run.sim imports it: no build-time banner on the parent's stdout

import hri.batch.batch  # noqa: E402,F401
import hri.run.sim  # noqa: E402,F401
from hri.actor.animation import ClipLibrary, clip_names  # noqa: E402
from hri.actor.body import clip_speeds  # noqa: E402

clip_speeds(ClipLibrary.default())  # read-only once built, cached per process: the workers inherit them
clip_names()
