"""A batch stopped while runs are waiting (Ctrl-C, a lost worker): its pool stops without a
traceback from concurrent.futures' threads, and no worker is left."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures.process import _ExecutorManagerThread

from hri.batch import backends
from processes import grandchildren, running


def test_stopping_with_runs_waiting_prints_nothing_and_leaves_no_worker(capfd, monkeypatch):
    """The first task ends at once, the others would sleep a minute: closing the results then
    (what Ctrl-C does) finds tasks queued behind the busy worker. Cancelling them before the
    worker is stopped made the pool's thread mark them failed too, and die on the
    InvalidStateError of a cancelled future (a 10-line traceback after the one-line message)."""
    died: list[str] = []  # what a thread raised (printed as a traceback outside pytest)
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(repr(args.exc_value)))
    before = set(threading.enumerate())
    others = set(grandchildren(os.getpid()))  # under the forkserver: another test's pool
    results = backends.run_local(time.sleep, [0.0] + [60.0] * 6, workers=1)
    assert next(results) is None
    workers = set(grandchildren(os.getpid())) - others
    results.close()
    err = capfd.readouterr().err
    assert not died
    assert "Traceback" not in err and "InvalidStateError" not in err, err
    assert not [t for t in set(threading.enumerate()) - before if isinstance(t, _ExecutorManagerThread)]
    assert workers and not [pid for pid in workers if running(pid)]

