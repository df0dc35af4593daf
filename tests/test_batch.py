"""``hri batch``: layout, seeds, results.parquet, resume after SIGINT and SIGKILL, failing
runs, worker scaling (printed only), and the Ray backend (marker ``ray``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures.process import _ExecutorManagerThread
from pathlib import Path

import numpy as np
import pytest

from hri.base.errors import HriError
from hri.batch import backends
from hri.batch.batch import build_results, make_configs, parse_sweep, run_seeds, split_top_level
from hri.scenario.load import load_scenario
from hri.cli.main import main
from hri.base.files import plain_file_mode
from hri.run.stats import WALL_CLOCK_KEYS
from processes import grandchildren, in_session

HRI = [sys.executable, "-m", "hri.cli.main"]
AREAS_OK = ("{table_left: [[0.5,0.55],[1.0,0.55],[1.0,1.0],[0.5,1.0]], "
            "table_right: [[1.6,0.55],[2.1,0.55],[2.1,1.0],[1.6,1.0]], "
            "inspection_area: [[0.6,1.8],[2.2,1.8],[2.2,2.2],[0.6,2.2]]}")
AREAS_BROKEN = "{inspection_area: [[0.6,1.8],[2.2,1.8],[2.2,2.2],[0.6,2.2]]}"  # the robot tree reads table_right


def _run_dirs(out: Path) -> list[str]:
    runs = out / "runs"
    return sorted(d.name for d in runs.iterdir() if not d.name.startswith(".")) if runs.is_dir() else []


def _parquet(out: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(out / "results.parquet").to_pylist()


def test_split_and_sweep_parsing() -> None:
    assert split_top_level("0.1,0.25") == ["0.1", "0.25"]
    assert split_top_level("[[0,0],[2,0],[2,2],[0,2]]") == ["[[0,0],[2,0],[2,2],[0,2]]"]
    assert split_top_level("'a,b',{x: 1, y: 2},\"c,d\"") == ["'a,b'", "{x: 1, y: 2}", '"c,d"']
    assert parse_sweep(["a.b=1,2", "c=[1,2]"]) == {"a.b": ["1", "2"], "c": ["[1,2]"]}


def test_keys_swept_together_take_their_values_side_by_side() -> None:
    """``--set a,b=[1,x],[2,y]``: two configurations (not four), crossed with the other lists."""
    sweep = parse_sweep(["safety.mode, safety.ssm.person_speed_m_s=[zones, 1.6], [ssm, measured]",
                         "robot.reduced_velocity=0.1,0.25"])
    configs = make_configs(sweep)
    assert [c["overrides"] for c in configs] == [
        {"safety.mode": "zones", "safety.ssm.person_speed_m_s": 1.6, "robot.reduced_velocity": 0.1},
        {"safety.mode": "zones", "safety.ssm.person_speed_m_s": 1.6, "robot.reduced_velocity": 0.25},
        {"safety.mode": "ssm", "safety.ssm.person_speed_m_s": "measured", "robot.reduced_velocity": 0.1},
        {"safety.mode": "ssm", "safety.ssm.person_speed_m_s": "measured", "robot.reduced_velocity": 0.25}]
    for config in configs:  # what a run loads is what the overrides say
        scenario = load_scenario("coexistence", config["assignments"])
        assert scenario.safety.mode == config["overrides"]["safety.mode"]
        assert scenario.safety.ssm.person_speed_m_s == config["overrides"]["safety.ssm.person_speed_m_s"]
        assert scenario.robot.reduced_velocity == config["overrides"]["robot.reduced_velocity"]


@pytest.mark.parametrize("sets, message", [
    (["a,b=[1,2],3"], "--set a,b: each value is a list of 2 values, one per key, e.g. [V1, V2]; got 3"),
    (["a,b=[1]"], "--set a,b: each value is a list of 2 values, one per key, e.g. [V1, V2]; got [1]"),
    (["a,=1"], "--set a,=1: empty key"),
    (["a=1", "b,a=[1,2]"], "--set a: given twice (list all its values in one --set)"),
])
def test_keys_swept_together_refuse_values_that_do_not_match_in_one_line(sets, message) -> None:
    with pytest.raises(HriError) as caught:
        parse_sweep(sets)
    assert str(caught.value) == message


def test_seeds_are_common_random_numbers() -> None:
    seeds = run_seeds(7, 3)
    assert seeds == [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(7).spawn(3)]
    assert len(set(seeds)) == 3


def test_small_sweep_layout_and_results(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "b"
    rc = main(["batch", "coexistence", "--runs", "2", "--duration", "5", "--workers", "2", "--seed", "3",
               "--set", "robot.reduced_velocity=0.1,0.25", "--out", str(out)])
    assert rc == 0
    batch = json.loads((out / "batch.json").read_text())
    assert batch["scenario"] == "coexistence" and batch["duration_s"] == 5.0 and batch["seed"] == 3
    assert batch["runs"] == 2 and batch["sweep"] == {"robot.reduced_velocity": [0.1, 0.25]}
    assert batch["configs"] == [{"id": "c000", "overrides": {"robot.reduced_velocity": 0.1}},
                                {"id": "c001", "overrides": {"robot.reduced_velocity": 0.25}}]
    assert _run_dirs(out) == ["c000-r0000", "c000-r0001", "c001-r0000", "c001-r0001"]
    seeds = run_seeds(3, 2)
    for rid in _run_dirs(out):
        run = json.loads((out / "runs" / rid / "run.json").read_text())
        config, k = int(rid[1:4]), int(rid[-4:])
        assert set(run) == {"run_id", "config_id", "overrides", "seed", "run_index", "status", "error",
                            "wall_time_s"}
        assert run["run_id"] == rid and run["config_id"] == f"c{config:03d}" and run["run_index"] == k
        assert run["seed"] == seeds[k] and run["status"] == "ok" and run["error"] is None
        assert run["overrides"] == batch["configs"][config]["overrides"]
        for name in ("stats.json", "events.jsonl", "trajectory.csv"):
            assert (out / "runs" / rid / name).is_file()
        assert json.loads((out / "runs" / rid / "stats.json").read_text())["seed"] == seeds[k]
    rows = _parquet(out)
    assert [r["run_id"] for r in rows] == _run_dirs(out)
    assert {r["set.robot.reduced_velocity"] for r in rows} == {"0.1", "0.25"}
    for column in ("config_id", "run_index", "seed", "status", "error", "zone_time_s.safe",
                   "robot_time_s.full", "zone_entries.stop", "parts.delivered", "min_separation_m"):
        assert column in rows[0]
    assert rows[0]["seed"] == rows[2]["seed"] != rows[1]["seed"]
    for path in (out / "batch.json", out / "results.parquet", out / "runs" / "c000-r0000" / "stats.json"):
        assert path.stat().st_mode & 0o777 == plain_file_mode(), path  # not mkstemp's 0600
    # a second start with the same arguments skips everything; a different one refuses
    capsys.readouterr()
    assert main(["batch", "coexistence", "--runs", "2", "--duration", "5", "--seed", "3",
                 "--set", "robot.reduced_velocity=0.1,0.25", "--out", str(out)]) == 0
    assert "skipping 4 already finished" in capsys.readouterr().out
    assert main(["batch", "coexistence", "--runs", "3", "--duration", "5", "--seed", "3",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"--out {out}: holds a different batch (") and "\n" not in err
    build_results(out)  # the stats engineer's entry point
    assert len(_parquet(out)) == 4


def _sigint_as_on_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ray_worker(session: int) -> int:
    """A Ray worker process of the session running a run (Ray names it after the task)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in in_session(session):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::execute_run"):
                    return pid
            except OSError:
                continue
        time.sleep(0.05)
    raise RuntimeError("no Ray worker running a run")


def _interrupt_and_resume(tmp_path: Path, sig: int, worker: bool = False, backend: str = "local") -> None:
    out = tmp_path / "b"
    # runs of ~1 s each: after the second one finishes, six more leave seconds for the signal
    cmd = HRI + ["batch", "coexistence", "--runs", "4", "--duration", "40", "--workers", "1" if not worker else "2",
                 "--set", "robot.reduced_velocity=0.1,0.25", "--backend", backend, "--out", str(out)]
    # Ctrl-C as on a terminal: a suite started in the background (`cmd &` in a script) has
    # SIGINT ignored, and an ignored SIGINT stays ignored in every process it starts.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=_sigint_as_on_a_terminal)
    deadline = time.monotonic() + 120
    while len(_run_dirs(out)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    if sig == signal.SIGINT:  # Ctrl-C on a terminal: the whole process group gets it
        os.killpg(proc.pid, sig)
    elif worker:  # a worker killed from outside (the kernel, out of memory)
        os.kill(_ray_worker(proc.pid) if backend == "ray" else grandchildren(proc.pid)[0], sig)
    else:  # the batch process alone is killed; its workers must not outlive it for long
        os.kill(proc.pid, sig)
    output, _ = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, output
        assert "interrupted" in output and "resume with hri batch coexistence" in output
        assert "Traceback" not in output and "Error" not in output, output  # the line alone
    if worker:  # one line, the other workers stopped, nothing of the batch left running
        assert proc.returncode == 1 and "Traceback" not in output, output
        assert re.search(r"\nhri batch: stopped: a worker process ended abruptly \(killed from outside, or out "
                         r"of memory\); \d+ finished runs kept in .*; resume with hri batch coexistence .*"
                         + ("--backend ray" if backend == "ray" else r"--out [^ ]+$"), output, re.M)
        deadline = time.monotonic() + 10  # the forkserver and resource tracker see the batch gone
        while in_session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:120] for p in in_session(proc.pid)}
        assert not left
    done_before = len(_run_dirs(out))
    assert 2 <= done_before < 8, output
    # the rest of the batch: seconds on an idle machine, minutes when the machine is loaded
    # (Ray's start-up included); the limit is for a hang, not a measure
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    skipped = int(re.search(r"skipping (\d+) already finished", again.stdout).group(1))
    assert skipped >= done_before
    assert _run_dirs(out) == [f"c{c:03d}-r{k:04d}" for c in range(2) for k in range(4)]
    assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".tmp-")]
    assert sorted(r["run_id"] for r in _parquet(out)) == _run_dirs(out)


def test_resume_after_sigint(tmp_path: Path) -> None:
    _interrupt_and_resume(tmp_path, signal.SIGINT)


def test_resume_after_sigkill(tmp_path: Path) -> None:
    _interrupt_and_resume(tmp_path, signal.SIGKILL)


def test_a_worker_killed_stops_the_batch_in_one_line_and_it_resumes(tmp_path: Path) -> None:
    _interrupt_and_resume(tmp_path, signal.SIGKILL, worker=True)


def test_a_lost_worker_leaves_no_pool_thread_to_race_the_exit() -> None:
    # concurrent.futures' exit hook writes to the pool thread's wake-up pipe; a thread still
    # closing that pipe at exit makes it print a traceback after the one-line message.
    before = set(threading.enumerate())
    with pytest.raises(backends.WorkerLost):
        list(backends.run_local(os._exit, [3, 3], workers=2))
    assert not [t for t in set(threading.enumerate()) - before if isinstance(t, _ExecutorManagerThread)]


@pytest.mark.ray
def test_a_ray_worker_killed_stops_the_batch_in_one_line_and_it_resumes(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    _interrupt_and_resume(tmp_path, signal.SIGKILL, worker=True, backend="ray")


def test_failing_run_is_recorded_and_retried(tmp_path: Path) -> None:
    out = tmp_path / "b"
    cmd = HRI + ["batch", "coexistence", "--runs", "1", "--duration", "5", "--workers", "2",
                 "--set", f"areas={AREAS_OK},{AREAS_BROKEN}", "--out", str(out)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 of 2 runs failed" in result.stdout
    ok = json.loads((out / "runs" / "c000-r0000" / "run.json").read_text())
    failed = json.loads((out / "runs" / "c001-r0000" / "run.json").read_text())
    assert ok["status"] == "ok" and failed["status"] == "failed"
    assert "table_right" in failed["error"]
    assert not (out / "runs" / "c001-r0000" / "stats.json").exists()
    rows = {r["run_id"]: r for r in _parquet(out)}
    assert rows["c001-r0000"]["status"] == "failed" and rows["c001-r0000"]["zone_time_s.safe"] is None
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "skipping 1 already finished, retrying 1 failed" in again.stdout


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target, a folder's name."""
    return {str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "/"
            for p in sorted(folder.rglob("*"))}


def test_a_batch_deletes_nothing_it_did_not_make(tmp_path: Path) -> None:
    """A folder of the user's and a run of hri run in runs/, beside a failed run the batch would
    retry, and a runs/ that is a link: the batch refuses in one line naming what is not its own,
    before it deletes anything; without them it retries its failed run as before."""
    out = tmp_path / "P"
    cmd = HRI + ["batch", "coexistence", "--runs", "1", "--duration", "1", "--workers", "1",
                 "--set", f"areas={AREAS_OK},{AREAS_BROKEN}", "--out", str(out)]
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=120).returncode == 1  # c001 failed
    (out / "runs" / "my_thesis_data").mkdir()
    (out / "runs" / "my_thesis_data" / "notes.txt").write_text("two years of work")
    assert main(["run", "coexistence", "--duration", "0.5", "--seed", "10", "--out", str(out / "runs" / "seed10")]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text("{}")
    (out / "runs" / "c001-r0001").symlink_to(elsewhere)
    before, outside = _tree(tmp_path / "P"), _tree(elsewhere)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"--out {out}: {out / 'runs' / 'c001-r0001'} was not made by this batch; hri batch "
                             "keeps only its own runs in runs/ (move it elsewhere, or give another --out)\n")
    assert _tree(out) == before and _tree(elsewhere) == outside
    link = tmp_path / "Q"  # runs/ a link to that folder: refused, not followed
    link.mkdir()
    (link / "runs").symlink_to(out / "runs")
    result = subprocess.run(cmd[:-1] + [str(link)], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (1, f"--out {link}: {link / 'runs'} is a link; a batch keeps its "
                                                     "runs in a folder of its own\n")
    assert _tree(out) == before and sorted(p.name for p in link.iterdir()) == ["runs"]
    for name in ("my_thesis_data", "seed10", "c001-r0001"):
        (out / "runs" / name).rename(tmp_path / name)
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "skipping 1 already finished, retrying 1 failed" in again.stdout
    assert (tmp_path / "my_thesis_data" / "notes.txt").read_text() == "two years of work"


def test_two_workers_vs_one(tmp_path: Path) -> None:
    times = {}
    for workers in (1, 2):
        start = time.perf_counter()
        assert main(["batch", "coexistence", "--runs", "4", "--duration", "10", "--workers", str(workers),
                     "--out", str(tmp_path / f"w{workers}")]) == 0
        times[workers] = time.perf_counter() - start
    print(f"\nbatch of 4 x 10 s: 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s "
          f"(speed-up {times[1] / times[2]:.2f}, {os.cpu_count()} CPUs)")


@pytest.mark.ray
def test_ray_backend_matches_local(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    args = ["batch", "coexistence", "--runs", "4", "--duration", "5", "--workers", "2", "--seed", "11"]
    assert main(args + ["--out", str(tmp_path / "local")]) == 0
    assert main(args + ["--backend", "ray", "--out", str(tmp_path / "ray")]) == 0
    assert _run_dirs(tmp_path / "local") == _run_dirs(tmp_path / "ray")
    for rid in _run_dirs(tmp_path / "local"):
        stats = [json.loads((tmp_path / b / "runs" / rid / "stats.json").read_text()) for b in ("local", "ray")]
        for s in stats:
            for key in WALL_CLOCK_KEYS:
                s.pop(key)
        assert stats[0] == stats[1], rid


def test_ray_missing_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert main(["batch", "coexistence", "--runs", "1", "--duration", "1", "--backend", "ray",
                 "--out", str(tmp_path / "b")]) == 1
    assert capsys.readouterr().err == "--backend ray: Ray is not installed (pip install '.[cluster]')\n"
    assert not (tmp_path / "b").exists()


def test_a_local_worker_starts_with_the_simulator_imported_and_the_clips_built() -> None:
    """The forkserver imports the simulator, builds the clips, reads their names and measures
    how fast each moves the body, once (hri/batch/worker_preload.py); a worker forked from it asks
    for none of them (each spent about 0.9 s on the first two and 0.3 s on the last before),
    and no PyBullet client is open in it."""
    from concurrent.futures import ProcessPoolExecutor

    from hri.batch.backends import worker_context

    animation = "__import__('hri.actor.animation', fromlist=['_'])"
    clips_built = f"{animation}.ClipLibrary.default.cache_info().currsize"
    names_read = f"{animation}.clip_names.cache_info().currsize"
    speeds = ("sorted((clip.name, travel) for clip, travel in "
              "__import__('hri.actor.body', fromlist=['_'])._FASTEST_POINT)")
    clip_count = f"len({animation}.ClipLibrary.default().names())"
    connected = "[c for c in range(8) if __import__('pybullet').isConnected(physicsClientId=c)]"
    with ProcessPoolExecutor(max_workers=1, mp_context=worker_context()) as pool:
        assert pool.submit(eval, "'hri.run.sim' in __import__('sys').modules").result() is True
        assert pool.submit(eval, clips_built).result() == 1
        assert pool.submit(eval, names_read).result() == 1
        measured = pool.submit(eval, speeds).result()
        assert len(measured) == pool.submit(eval, clip_count).result()
        assert "walk" in [name for name, _ in measured]
        assert pool.submit(eval, connected).result() == []


def test_clip_speeds_measured_apart_are_those_of_a_body_in_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clips' speeds are measured on a client of their own (the body alone; the preload's
    table, or a run's first set-up) and hold the same bits as a body in a run's world gives;
    the run's own body is not posed through the clips (in a window, it would flail)."""
    from hri.actor import body
    from hri.actor.animation import ClipLibrary
    from hri.scenario.load import load_scenario
    from hri.run.sim import Simulation

    clips = ClipLibrary.default()
    monkeypatch.setattr(body, "_FASTEST_POINT", {})
    posed = []
    apply = body.HumanoidBody.apply
    monkeypatch.setattr(body.HumanoidBody, "apply", lambda self, *a: posed.append(self.client) or apply(self, *a))
    with Simulation(load_scenario("coexistence"), 0) as sim:
        apart = body.clip_speeds(clips)
        assert posed.count(sim.client) == 1  # its start pose
        monkeypatch.setattr(body, "_FASTEST_POINT", {})
        in_run = body.HumanoidBody(sim.client)
        speeds = {name: in_run.fastest_point(clips.get(name)) for name in clips.names() if name != clips.WALK}
        walk = in_run.fastest_point(clips.walk, travel_speed=clips.walk.natural_speed)
    assert len(apart[0]) == len(clips.names()) - 1 and apart == (speeds, walk)


def test_the_worker_server_is_ready_when_started() -> None:
    """``start_worker_server`` returns once the forkserver has done its preload, so the first
    batch a benchmark times does not wait for it (starting the server alone returns at once)."""
    probe = ("from multiprocessing import forkserver\n"
             "from hri.batch.backends import start_worker_server\n"
             "start_worker_server()\n"
             "maps = open(f'/proc/{forkserver._forkserver._forkserver_pid}/maps').read()\n"
             "print('pybullet' in maps)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
