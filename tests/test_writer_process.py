"""The MCAP file's writer in a process of its own (:mod:`hri.view.writer_process`): the file
has the very messages a writer in the run's process writes; an error there is one line and
leaves no file; a run killed outright leaves neither a file nor the process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcap.reader import make_reader

from hri.base.errors import HriError
from hri.run.sim import run_scenario
from hri.scenario.load import load_scenario
from hri.view.channel_writer import Scene
from hri.view.mcap_file import ChannelPublisher, McapFile
from hri.view.writer_process import WriterProcess

HRI = [sys.executable, "-m", "hri.cli.main"]


def _records(path: Path) -> list[tuple[str, int, bytes]]:
    with path.open("rb") as stream:
        return [(channel.topic, message.log_time, message.data)
                for _schema, channel, message in make_reader(stream).iter_messages(log_time_order=False)]


def test_the_writer_process_writes_what_the_run_s_process_would(tmp_path) -> None:
    """Cooperation (parts appear and go on belts) for 10 s, seed 2: every message of the two
    files, in order, byte for byte."""
    scenario = load_scenario("cooperation")
    for name, process in (("own.mcap", True), ("in_run.mcap", False)):
        publisher = ChannelPublisher([McapFile(tmp_path / name)], process=process)
        run_scenario(scenario, 10.0, seed=2, observers=[publisher])
    own, in_run = _records(tmp_path / "own.mcap"), _records(tmp_path / "in_run.mcap")
    assert len(own) > 1000 and {topic for topic, _t, _d in own} >= {"/scene", "/tf", "/safety", "/events"}
    assert own == in_run


def test_an_error_in_the_writer_process_is_one_line_and_leaves_no_file(tmp_path) -> None:
    writer = WriterProcess([McapFile(tmp_path / "x.mcap")], {}, "--mcap x.mcap")
    writer.scene(lambda: Scene((), (), {}, {}, ()), 0.0)
    writer.sample(0.0, ("robot/base",), [0.0, 0.0], ((), (), ()), {"t": 0.0}, frozenset())  # 2 values, not 7
    with pytest.raises(HriError) as raised:
        writer.end(discard=False)
    assert str(raised.value).startswith("--mcap x.mcap: IndexError") and "\n" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def _writers() -> set[int]:
    """The pids of the writer processes on this machine."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"hri.view.writer_process" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                pass
    return found


def test_a_killed_run_leaves_no_file_and_no_writer_process(tmp_path) -> None:
    before = _writers()
    run = subprocess.Popen([*HRI, "run", "coexistence", "--duration", "600", "--mcap", str(tmp_path / "run.mcap")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (_writers() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    ours = _writers() - before
    assert ours, "no writer process started"
    time.sleep(1.0)  # the run is writing
    assert any(tmp_path.iterdir())  # the hidden file
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 30
    while ours & _writers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ours & _writers()
    assert list(tmp_path.iterdir()) == []
