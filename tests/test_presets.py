"""Cooperation and collaboration: the thesis's other two scenarios, run whole.

The default suite runs each for 900 simulated seconds (side by side, one per core); the
acceptance runs of an hour are behind the ``slow`` marker: ``pytest -m slow``.
"""

import json
import math
import subprocess

import pytest

from test_cli import HRI

WALL_CLOCK = ("wall_time_s", "real_time_factor")


def run_side_by_side(*commands: tuple[str, ...]) -> list[tuple[dict, list[dict]]]:
    """Run `hri run ... --json --out DIR` commands in parallel; (statistics, events) of each."""
    procs = [subprocess.Popen([HRI, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for cmd in commands]
    results = []
    for cmd, proc in zip(commands, procs):
        out, err = proc.communicate(timeout=1800)
        assert proc.returncode == 0, err
        out_dir = cmd[cmd.index("--out") + 1]
        with open(f"{out_dir}/events.jsonl") as fh:
            events = [json.loads(line) for line in fh]
        results.append((json.loads(out), events))
    return results


def binomial_p_value(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial test: probability of an outcome as unlikely as k of n."""
    pmf = [math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(n + 1)]
    return min(1.0, sum(q for q in pmf if q <= pmf[k] * (1 + 1e-9)))


def every_call_answered(events: list[dict]) -> bool:
    """Each person_called is followed by its person_released (a call still open at the end is
    allowed only as the very last call)."""
    state = []
    for e in events:
        if e["event"] in ("person_called", "person_released"):
            state.append(e["event"])
    pairs_ok = all(state[i] == "person_called" and (i + 1 == len(state) or state[i + 1] == "person_released")
                   for i in range(0, len(state), 2))
    return pairs_ok and state.count("person_called") - state.count("person_released") in (0, 1)


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("presets")
    return dict(zip(("cooperation", "collaboration"), run_side_by_side(
        ("run", "cooperation", "--duration", "900", "--seed", "1", "--json", "--out", str(out / "coop")),
        ("run", "collaboration", "--duration", "900", "--seed", "1", "--json", "--out", str(out / "colab")),
    )))


def check_common(stats: dict, events: list[dict]) -> None:
    assert stats["real_time_factor"] > 1.0
    assert stats["robot_cycles"] > 0
    assert stats["human_calls"] >= 1
    assert stats["human_response_s"] is not None and math.isfinite(stats["human_response_s"])
    assert stats["safety_violations"] == 0
    assert stats["min_separation_m"] > 0
    assert every_call_answered(events)


def test_cooperation_sorts_parts_and_the_person_shelves_the_bad_ones(long_runs):
    stats, events = long_runs["cooperation"]
    print("\ncooperation 900 s:", json.dumps(stats))
    check_common(stats, events)
    good, bad = stats["parts_good"], stats["parts_bad"]
    assert good + bad >= 100
    assert binomial_p_value(bad, good + bad, 0.1) > 0.001, f"{bad} bad of {good + bad}"
    assert stats["parts"]["delivered"] > 0.8 * good  # the conveyor takes the good ones away
    assert stats["parts_shelved"] >= 1 and stats["parts_shelved"] <= stats["parts"]["taken_by_person"]
    shelved = [e for e in events if e["event"] == "part_placed" and e["by"] == "person"]
    assert all(e["surface"] == "shelf" for e in shelved)


def test_collaboration_person_visits_every_zone_and_answers_every_call(long_runs):
    stats, events = long_runs["collaboration"]
    print("\ncollaboration 900 s:", json.dumps(stats))
    check_common(stats, events)
    assert all(stats["zone_time_s"][zone] > 0 for zone in ("safe", "warning", "stop"))
    assert stats["robot_failures"] >= stats["human_calls"]
    assert stats["recoveries"] >= stats["human_calls"] - 1
    assert stats["parts"]["collected"] > 0


def test_presets_are_deterministic(tmp_path):
    runs = run_side_by_side(*[("run", name, "--duration", "120", "--seed", "5", "--json", "--out", str(tmp_path / f"{name}{i}"))
                              for name in ("cooperation", "collaboration") for i in (0, 1)])
    for (a, ev_a), (b, ev_b) in (runs[0:2], runs[2:4]):
        for key in WALL_CLOCK:
            a.pop(key), b.pop(key)
        assert a == b and ev_a == ev_b


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cooperation", "collaboration"])
def test_acceptance_hour(tmp_path, name):
    """The issue's acceptance runs: `hri run NAME --duration 3600 --seed 1 --json`."""
    (stats, events), = run_side_by_side(("run", name, "--duration", "3600", "--seed", "1", "--json",
                                         "--out", str(tmp_path / name)))
    print(f"\n{name} 3600 s:", json.dumps(stats))
    check_common(stats, events)
