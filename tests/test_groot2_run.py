"""``hri run --groot2``: the run's trees served to Groot2 while it runs, on their ports."""

from __future__ import annotations

import struct

import pytest

from hri.base.errors import HriError
from hri.bt.loggers.groot2_publisher import DEFAULT_PORT
from hri.cli.main import DEFAULT_GROOT2_PORT, _build_parser
from hri.run.groot2 import check_base_port, tree_ports
from hri.run.sim import Simulation
from hri.scenario.load import load_scenario
from test_groot2_publisher import Client, _free, free_port_pair, freed


def test_the_person_serves_on_the_base_pair_and_the_robot_on_the_next():
    assert DEFAULT_GROOT2_PORT == DEFAULT_PORT == 1667
    assert tree_ports() == {"person": 1667, "robot": 1669}
    assert _build_parser().parse_args(["run", "coexistence", "--groot2"]).groot2 == 1667
    assert _build_parser().parse_args(["run", "coexistence", "--groot2", "2000"]).groot2 == 2000
    assert _build_parser().parse_args(["run", "coexistence"]).groot2 is None
    with pytest.raises(HriError, match="65535"):
        check_base_port(65533)


def _free_quad() -> int:
    for _ in range(50):
        base = free_port_pair()
        if _free(base + 2) and _free(base + 3):
            return base
    raise RuntimeError("no four free ports")


@pytest.mark.parametrize("given", [["--groot2", "coexistence"], ["coexistence", "--groot2"],
                                   ["--groot2", "{base}", "coexistence"], ["--groot2={base}", "coexistence"]])
def test_a_run_tells_where_groot2_reaches_its_trees_as_replay_does(given, monkeypatch, capsys):
    """``hri run --groot2`` says on stderr where each tree listens, in the lines of ``hri
    replay`` (stdout keeps the statistics alone); the scenario after a bare ``--groot2`` is
    the scenario, not the port."""
    import json

    import hri.cli.main as cli

    base = _free_quad()
    monkeypatch.setattr(cli, "DEFAULT_GROOT2_PORT", base)  # a bare --groot2 on free ports
    argv = ["run", *(word.format(base=base) for word in given), "--duration", "0.1", "--json"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["scenario"] == "coexistence"
    assert err.splitlines() == [f"person: Groot2 on port {base} (publisher {base + 1})",
                                f"robot: Groot2 on port {base + 2} (publisher {base + 3})"]
    assert freed(range(base, base + 4))


def test_a_running_simulation_answers_groot2_and_frees_its_ports():
    base = _free_quad()
    with Simulation(load_scenario("coexistence"), seed=1, groot2_port=base) as sim:
        clients = {role: Client(port, sim.step) for role, port in tree_ports(base).items()}
        for role, client in clients.items():
            header, (xml,) = client.ask("T")
            assert header[:2] == b"\x02T" and xml.decode() == sim.trees[role].tree_xml()
        for _ in range(200):
            sim.step()
        _, (status,) = clients["person"].ask("S")
        uids = sorted(struct.unpack_from("<H", status, i)[0] for i in range(0, len(status), 3))
        assert uids == list(range(1, len(status) // 3 + 1))
        assert any(status[i] for i in range(2, len(status), 3))  # the tree has ticked
        _, (dump,) = clients["robot"].ask("B", sim.trees["robot"].tree.tree_id.encode())
        assert dump[:1] != b"\xc0"  # the robot's main blackboard has entries
        for client in clients.values():
            client.close()
    assert freed(range(base, base + 4))


def test_a_port_in_use_is_one_line_and_the_run_does_not_start():
    base = _free_quad()
    with Simulation(load_scenario("coexistence"), seed=1, groot2_port=base):
        with pytest.raises(HriError, match="--groot2: cannot listen on port"):
            with Simulation(load_scenario("coexistence"), seed=1, groot2_port=base + 2):
                pass


def _stats(sim: Simulation) -> dict:
    return {key: value for key, value in sim.stats.as_dict().items()
            if key not in ("wall_time_s", "real_time_factor")}


def test_a_thousand_random_requests_during_a_run_leave_its_statistics_unchanged():
    import random

    import zmq

    from test_groot2_publisher import random_request

    with Simulation(load_scenario("coexistence"), seed=1) as sim:
        sim.run(20.0)
        expected = _stats(sim)
    base = _free_quad()
    rng = random.Random(2)
    with Simulation(load_scenario("coexistence"), seed=1, groot2_port=base) as sim:
        dealers = []
        for port in tree_ports(base).values():
            dealer = zmq.Context.instance().socket(zmq.DEALER)
            dealer.setsockopt(zmq.LINGER, 0)
            dealer.connect(f"tcp://127.0.0.1:{port}")
            for _ in range(500):
                dealer.send_multipart([b"", *random_request(rng)])
            dealers.append(dealer)
        sim.run(20.0)
        answered = sum(publisher.answered for publisher in sim.live.publishers.values())
        for dealer in dealers:  # they vanish with their answers unread
            dealer.close(0)
        assert _stats(sim) == expected
    assert answered == 1000
