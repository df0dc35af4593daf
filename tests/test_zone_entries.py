"""What a zone entry means for the statistics: a visit, not a crossing (hri.run.monitor.EntryCounter).

A person who stands on a border and sways across it four times in 0.8 s makes one visit; the
robot still reacts to every crossing (the monitor's zone_enter events and the protective
stop are not smoothed: only the count is).
"""

from __future__ import annotations

from hri.run.monitor import EntryCounter


def crossings(counter: EntryCounter, steps: list[tuple[float, str]], start: str | None = None) -> dict[str, int]:
    zone = start
    for t, after in steps:
        counter.crossed(t, zone, after)
        zone = after
    return counter.counts


def test_a_sway_on_the_border_is_one_visit():
    counter = EntryCounter()
    sway = [(0.0, "safe"), (10.0, "warning"), (10.2, "safe"), (10.4, "warning"), (10.6, "safe"), (10.8, "warning")]
    assert crossings(counter, sway) == {"warning": 1, "stop": 0}


def test_coming_back_after_the_gap_is_a_new_visit():
    counter = EntryCounter()
    steps = [(0.0, "safe"), (5.0, "warning"), (6.0, "safe"), (7.0, "warning"), (8.0, "safe"), (8.5, "warning")]
    assert crossings(counter, steps) == {"warning": 2, "stop": 0}


def test_the_stop_zone_counts_its_own_visits_and_they_are_inside_one_warning_visit():
    counter = EntryCounter()
    steps = [(0.0, "safe"), (1.0, "warning"), (2.0, "stop"), (2.3, "warning"), (2.6, "stop"),  # one stop visit
             (5.0, "warning"), (7.0, "stop"), (9.0, "warning"), (9.5, "safe")]  # a second one
    assert crossings(counter, steps) == {"warning": 1, "stop": 2}


def test_without_the_gap_every_crossing_would_count():
    counter = EntryCounter()
    counter.GAP_S = 0.0  # the mutation: the count follows the crossings again
    sway = [(0.0, "safe"), (10.0, "warning"), (10.2, "safe"), (10.4, "warning"), (10.6, "safe"), (10.8, "warning")]
    assert crossings(counter, sway)["warning"] == 3
