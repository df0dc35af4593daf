"""The suite's table of contents: the benchmarks by name, and the default scenarios.

Kept free of imports: ``hri`` builds its command line (help text included) at every start.
"""

from __future__ import annotations

#: name -> (module under hri.bench, what it measures); the order of a full run
BENCHMARKS: dict[str, tuple[str, str]] = {
    "realtime": ("realtime_factor", "headless real-time factor, and bare PyBullet on the same world"),
    "breakdown": ("step_breakdown", "time per step by component"),
    "roundtrip": ("actor_roundtrip", "actor action message round trip, in one process and split"),
    "batch": ("batch_throughput", "batch throughput with 1 and with all workers"),
    "memory": ("memory", "peak memory of a run, and memory growth over a long run"),
    "groot2": ("groot2_cost", "real-time factor with --groot2: nobody connected, and a client polling at 20 Hz"),
    "xml": ("xml_read", "reading a 5-MB tree file: the tinyxml2 pre-pass beside expat"),
    "people": ("people_scaling", "wall time per simulated second with 1, 2, 4 and 8 people walking in one room"),
    "safety": ("safety_hours", "many simulated hours across the scenarios: safety violations (only with --only)"),
    "ab": ("ab_compare", "real-time factor of this install and of another (--against), alternating, "
                         "on the same seeded runs (only with --only)"),
}

#: benchmarks that run only when named with --only (safety takes hours, ab needs --against)
ON_REQUEST = ("safety", "ab")

#: the presets (hri.scenario.load.PRESETS, not imported: it pulls in YAML)
DEFAULT_SCENARIOS = ("coexistence", "cooperation", "collaboration")
