"""Where the runs of a batch execute (worker processes on this machine, or Ray tasks), and
how their progress is shown.

Both backends run the same function, :func:`hri.batch.batch.execute_run`, on the same task
dictionaries, so a batch gives the same statistics on either (the seeds are in the tasks).
A backend takes the tasks and yields each run's result as it finishes; on
``KeyboardInterrupt`` it stops its workers before re-raising, and a worker process that ends
abruptly (killed from outside, out of memory) stops the others and raises :class:`WorkerLost`,
on either backend.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from hri.base.errors import HriError
from hri.base.files import is_alive

RAY_MISSING = "--backend ray: Ray is not installed (pip install '.[cluster]')"
WORKER_LOST = "a worker process ended abruptly (killed from outside, or out of memory)"
Task = Callable[[dict[str, Any]], dict[str, Any]]  # a picklable module-level function
IN_LOCAL_WORKER = False  # set by _worker_init: a run stopped there ends the process (hri.batch.batch)


class WorkerLost(HriError):
    """A worker process ended in the middle of the batch without finishing its run (killed
    from outside, e.g. by the kernel out of memory); the other workers are stopped."""


def _worker_init(parent_pid: int) -> None:
    """Runs once in every local worker: Ctrl-C is the parent's business, not the worker's;
    and a worker whose batch process died (SIGKILL) ends itself instead of idling forever."""
    global IN_LOCAL_WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from hri.base.quiet import import_pybullet_quietly

    IN_LOCAL_WORKER = True

    import_pybullet_quietly()
    watch_parent(parent_pid)


def watch_parent(parent_pid: int) -> None:
    """In a child process (a pool's ``initializer``): end this process, queues closed, when
    ``parent_pid`` dies, however it dies; a pool's workers are not told otherwise."""
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    # The batch process may be a zombie nobody reaps yet, so watch our own parent (the batch
    # process, or the forkserver, which exits with it): a dead parent means we were re-parented.
    first_parent = os.getppid()
    while os.getppid() == first_parent and is_alive(parent_pid):
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)  # hri.base.mqueue closes the run's queues on SIGTERM
    time.sleep(5.0)
    os._exit(1)


def worker_context() -> multiprocessing.context.BaseContext:
    """How child processes start: from the forkserver (or ``spawn``), never a fork, because
    PyBullet clients and POSIX queues must not be copied mid-use. The forkserver imports the
    simulator once (:mod:`hri.batch.worker_preload`), so its workers start with it imported."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["hri.batch.worker_preload"])
    _ensure_forkserver_deaf_to_ctrl_c()
    return context


def _ensure_forkserver_deaf_to_ctrl_c() -> None:
    """Start the forkserver (if it is not running) with SIGINT ignored from its first
    instruction. It ignores SIGINT itself only after its preload, which takes seconds: a Ctrl-C
    meanwhile (the terminal sends it to the whole process group) ended it with a traceback of
    the import it was in. An ignored signal stays ignored across exec."""
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()  # signal handlers can only be set in the main thread
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


def start_worker_server() -> None:
    """Start the forkserver now and return when its preload is done (a benchmark times batches
    without it: a batch command pays it once, whatever its number of workers). Starting the
    server does not wait for the preload; the first process forked from it does."""
    context = worker_context()
    if context.get_start_method() == "forkserver":
        first = context.Process(target=int)
        first.start()
        first.join()


def run_local(execute_run: Task, tasks: list[dict[str, Any]], workers: int) -> Iterator[dict[str, Any]]:
    """``execute_run`` of each of ``tasks`` in ``workers`` fresh processes; yield each result as
    it finishes."""
    if not tasks:
        return
    executor = ProcessPoolExecutor(max_workers=max(1, min(workers, len(tasks))), mp_context=worker_context(),
                                   initializer=_worker_init, initargs=(os.getpid(),))
    pending: set[Future] = set()
    try:
        pending = {executor.submit(execute_run, task) for task in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    except BrokenProcessPool:
        _stop_local(executor)
        raise WorkerLost(WORKER_LOST) from None
    except BaseException:
        _stop_local(executor)
        raise
    executor.shutdown(wait=True)


def _stop_local(executor: ProcessPoolExecutor) -> None:
    """Drop what has not started and terminate the worker processes (ours, by pid).

    The pool's own thread cancels the waiting runs (``shutdown(cancel_futures=True)``), not
    this one: a run cancelled here stays among the pool thread's work items until it takes
    them off, and when the workers die first, that thread marks every one of them failed,
    meets the cancelled one and dies on ``InvalidStateError``, a traceback after the batch's
    one line."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            try:
                os.kill(process.pid, signal.SIGTERM)  # hri.base.mqueue closes its queues on SIGTERM
            except ProcessLookupError:
                pass
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)
    if manager is not None:
        # The pool's manager thread closes its wake-up pipe as it ends; if it is still ending when
        # the interpreter exits, concurrent.futures' exit hook writes to the closed pipe and prints
        # a traceback (a race in CPython). With the workers gone it ends at once.
        manager.join(timeout=10)


def run_ray(execute_run: Task, tasks: list[dict[str, Any]], workers: int,
            address: str | None) -> Iterator[dict[str, Any]]:
    """``execute_run`` of each of ``tasks`` as Ray tasks on the cluster at ``address`` (or a
    local instance)."""
    try:
        import ray
    except ImportError:
        raise HriError(RAY_MISSING) from None
    import logging

    if not tasks:
        return
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, workers), include_dashboard=False, logging_level=logging.WARNING,
                     log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(execute_run)
    pending = [remote.remote(task) for task in tasks]
    # what Ray raises for a task whose worker process (or node) ended under it
    lost = (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError,
            ray.exceptions.NodeDiedError, ray.exceptions.LocalRayletDiedError)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    except lost:
        _cancel_ray(ray, pending)
        raise WorkerLost(WORKER_LOST) from None
    except BaseException:
        _cancel_ray(ray, pending)
        raise
    finally:
        if started_here:
            ray.shutdown()


def _cancel_ray(ray: Any, pending: list) -> None:
    """Cancel the Ray tasks not yet finished (best effort while stopping)."""
    for ref in pending:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001 - best effort while stopping
            pass


class Progress:
    """A tqdm bar on a terminal, one plain line per finished run otherwise."""

    def __init__(self, total: int, tty: bool | None = None) -> None:
        self.total, self.done, self.failed, self.sim_s = total, 0, 0, 0.0
        self.start = time.monotonic()
        self.bar = None
        if sys.stderr.isatty() if tty is None else tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="run", desc="batch", dynamic_ncols=True)

    def update(self, result: dict[str, Any]) -> None:
        record = result["record"]
        self.done += 1
        self.failed += record["status"] != "ok"
        self.sim_s += result.get("sim_time_s") or 0.0
        elapsed = time.monotonic() - self.start
        speed = self.sim_s / elapsed if elapsed > 0 else 0.0
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, sim_h_per_h=f"{speed:.1f}", refresh=False)
            self.bar.update(1)
            return
        error = f": {record['error']}" if record["error"] else ""
        print(f"{record['run_id']} {record['status']} {record['wall_time_s']:.1f} s "
              f"[{self.done}/{self.total}, {self.failed} failed, {elapsed:.0f} s elapsed, "
              f"{speed:.1f} sim h/h]{error}", flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
