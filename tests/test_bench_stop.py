"""A benchmark stopped from outside takes its worker processes with it: SIGTERM stops a
``hri bench --only safety`` batch's workers before the bench exits (143, ``hri: terminated``),
and a Ctrl-C while the worker server still imports the simulator does not end it with a
traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from processes import grandchildren, running, stop
from test_cli import HRI


def test_a_terminated_safety_bench_has_stopped_its_workers_when_it_ends(tmp_path):
    bench = subprocess.Popen([HRI, "bench", "--only", "safety", "--safety-hours", "0.5", "--safety-run", "300",
                                    "--scenario", "coexistence", "--batch-workers", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers := grandchildren(bench.pid)) < 2:  # the forkserver's children
            assert time.monotonic() < deadline and bench.poll() is None, "the workers never started"
            time.sleep(0.1)
        time.sleep(2.0)  # a run is going on in each
        bench.send_signal(signal.SIGTERM)
        _, err = bench.communicate(timeout=60)
        left = [pid for pid in workers if running(pid)]  # the moment the bench has ended
        assert bench.returncode == 143, err
        assert err.splitlines()[-1] == "hri: terminated" and "Traceback" not in err, err
        assert not left
    finally:
        stop(bench, workers)


def test_ctrl_c_while_the_worker_server_imports_does_not_end_it():
    """The forkserver's preload (hri's simulator, the clip library) takes seconds; the terminal
    sends Ctrl-C to the whole process group, the forkserver included."""
    script = ("import os, signal, time\n"
              "import multiprocessing.forkserver as forkserver\n"
              "from hri.batch.backends import worker_context\n"
              "worker_context()\n"
              "pid = forkserver._forkserver._forkserver_pid\n"
              "os.kill(pid, signal.SIGINT)\n"
              "time.sleep(0.5)\n"
              "print(os.waitpid(pid, os.WNOHANG)[0])\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout == "0\n", "the forkserver ended"
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr
