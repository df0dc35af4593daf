"""Figures of ``hri stats --plots``: PNGs of a batch of runs or of one run (matplotlib, Agg).

Every function returns its :class:`matplotlib.figure.Figure` (made without pyplot, so no
global state and no display); :func:`write_plots` saves them into ``DIR/plots/``.

A batch: zone times per configuration (box plots), the minimum-separation histogram,
throughput against safety (one point per run), and a heat map of where the person was on
the floor with the zones and the furniture. One run: the floor plan with the zones, the
person's path coloured by time, the robot's velocity fraction over time above the person's
zone, and the separation over time.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch, Polygon  # noqa: E402

from hri.base.errors import HriError  # noqa: E402
from hri.base.files import output_folder, write_atomic  # noqa: E402
from hri.base.untrusted import Unreadable, read_output  # noqa: E402
from hri.batch.report import Batch, RunDir, config_labels  # noqa: E402
from hri.run.stats import TRAJECTORY_COLUMNS, stops_key  # noqa: E402

if TYPE_CHECKING:
    from hri.scenario.model import Scenario

ZONE_COLORS = {"safe": "#4caf50", "warning": "#ff9800", "stop": "#e53935"}
ZONE_ORDER = ("safe", "warning", "stop")
ROW_DT = 0.1  # trajectory.csv has ten rows per simulated second


def read_trajectory(path: Path) -> dict[str, np.ndarray]:
    """``trajectory.csv`` as columns (those of ``TRAJECTORY_COLUMNS``): floats, and ``zone`` as
    strings; HriError (``FILE:LINE: ...``) for a file that is not one hri wrote whole."""
    try:
        reader = csv.DictReader(io.StringIO(read_output(path).decode("utf-8"), newline=""))
        rows = list(reader)
        header = reader.fieldnames or []
    except Unreadable as err:  # a symlink out of the run folder, a FIFO, too large
        raise HriError(f"{path}: {err}") from None
    except (OSError, ValueError, csv.Error) as err:  # unreadable, not UTF-8, not CSV
        raise HriError(f"{path}: cannot read: {err}") from None
    missing = [key for key in TRAJECTORY_COLUMNS if key not in header]
    if missing:
        raise HriError(f"{path}: not a trajectory of hri: no column {missing[0]!r}")
    for line, row in enumerate(rows, 2):  # every row has the header's columns, those not read too
        if None in row or None in row.values():
            raise HriError(f"{path}:{line}: not a row of numbers as hri writes it (cut short?)")
    out: dict[str, np.ndarray] = {"zone": np.array([r["zone"] for r in rows], str)}
    people = [key for key in header if PERSON_XY.fullmatch(key)]  # several people: each one's pelvis
    for key in [*(key for key in TRAJECTORY_COLUMNS if key != "zone"), *people]:
        out[key] = np.array([_cell(r[key], path, line) for line, r in enumerate(rows, 2)], float)
    return out


#: a column of one person's pelvis in a trajectory of several people (hri.run.stats.person_columns)
PERSON_XY = re.compile(r"person_([A-Za-z][A-Za-z0-9_]*)_([xy])")


def people_paths(traj: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each person's pelvis path by name: with one person, ``person``'s (``person_x``, ``person_y``)."""
    names = [m.group(1) for key in traj if (m := PERSON_XY.fullmatch(key)) and m.group(2) == "x"]
    if not names:
        return {"person": (traj["person_x"], traj["person_y"])}
    return {name: (traj[f"person_{name}_x"], traj[f"person_{name}_y"]) for name in names}


def _cell(text: str | None, path: Path, line: int) -> float:
    if text in ("", "None", "nan"):
        return np.nan
    try:
        return float(text)  # None: the row is cut short
    except (TypeError, ValueError):
        raise HriError(f"{path}:{line}: not a row of numbers as hri writes it (cut short?)") from None


def load_layout(name: str | None, overrides: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The scenario's room, zones and furniture, or None (with a note) if it cannot be loaded."""
    if not name:
        return None
    from hri.scenario.load import load_scenario

    sets = [f"{k}={json.dumps(v)}" for k, v in (overrides or {}).items()]
    for attempt in (sets, []):
        try:
            return layout_of(load_scenario(str(name), attempt))
        except (HriError, KeyError, ValueError):
            continue
    print(f"hri stats: scenario '{name}' not found: floor plots without zones and furniture", file=sys.stderr)
    return None


def layout_of(scenario: "Scenario") -> dict[str, Any]:
    """The room, zones, furniture, robot base and person's start of a scenario."""
    return {"room": list(scenario.room.size),
            "zones": {n: list(a.points) for n, a in scenario.zones.items()},
            "furniture": scenario.furniture,
            "robot_base": [scenario.robot.base.x, scenario.robot.base.y],
            "person_start": [scenario.person.start.x, scenario.person.start.y]}


def run_layout(path: Path, name: str | None, overrides: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The floor plan of the run in ``path``: from the scenario the run kept (``scenario.yaml``,
    :mod:`hri.run.run_dir`), which holds its overrides and needs nothing else; a folder written
    before runs kept theirs is looked up by the scenario's name."""
    from hri.run.run_dir import kept_scenario

    try:
        scenario = kept_scenario(path)
    except HriError as err:
        print(f"hri stats: {err}: floor plots without zones and furniture", file=sys.stderr)
        return None
    return layout_of(scenario) if scenario is not None else load_layout(name, overrides)


def _draw_layout(ax: Any, layout: dict[str, Any] | None, xs: np.ndarray, ys: np.ndarray) -> None:
    if layout:
        w, h = layout["room"]
        ax.add_patch(Polygon([[0, 0], [w, 0], [w, h], [0, h]], closed=True, fill=False, ec="black", lw=1.5))
        for name, piece in layout["furniture"].items():
            corners = np.asarray(piece.footprint.exterior.coords[:-1])
            ax.add_patch(Polygon(corners, closed=True, fc="#9e9e9e", ec="#424242", alpha=0.55))
            ax.annotate(name, piece.center, ha="center", va="center", fontsize=7)
        for name, pts in layout["zones"].items():
            ax.add_patch(Polygon(pts, closed=True, fill=False, ec=ZONE_COLORS.get(name, "blue"), lw=2, ls="--",
                                 label=f"{name} zone"))
        ax.set_xlim(-0.2, w + 0.2)
        ax.set_ylim(-0.2, h + 0.2)
    elif xs.size:
        ax.set_xlim(np.nanmin(xs) - 0.5, np.nanmax(xs) + 0.5)
        ax.set_ylim(np.nanmin(ys) - 0.5, np.nanmax(ys) + 0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


# --- a batch -------------------------------------------------------------------------------

def _by_config(batch: Batch, metric: str) -> list[list[float]]:
    return [[v for r in batch.ok_runs(c) if (v := r.value(metric)) is not None] for c in batch.config_ids]


def _config_names(batch: Batch) -> list[str]:
    """The configurations named by their settings (``reduced_velocity=0.1``), in order."""
    labels = config_labels(batch)
    return [labels[c] for c in batch.config_ids]


def zone_time_figure(batch: Batch) -> Figure:
    """Box plots of the time in each zone, one box per configuration (one axes per zone)."""
    fig = Figure(figsize=(10, 4), layout="constrained")
    axes = fig.subplots(1, len(ZONE_ORDER), squeeze=False)[0]
    names = _config_names(batch)
    for ax, zone in zip(axes, ZONE_ORDER):
        data = _by_config(batch, f"zone_time_s.{zone}")
        ax.boxplot([d if d else [np.nan] for d in data], tick_labels=names, patch_artist=True,
                   boxprops={"facecolor": ZONE_COLORS[zone], "alpha": 0.5})
        if sum(map(len, names)) > 24:  # settings as names are long: slant them so they do not overlap
            ax.tick_params(axis="x", labelrotation=30)
        ax.set_title(f"time in the {zone} zone")
        ax.set_ylabel("s")
        ax.set_xlabel("configuration")
    fig.suptitle(f"zone times per run ({len(batch.ok_runs())} runs)")
    return fig


def separation_figure(batch: Batch) -> Figure:
    """Histogram of the runs' minimum separation, stacked by configuration."""
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    data = _by_config(batch, "min_separation_m")
    flat = [v for d in data for v in d]
    bins = np.histogram_bin_edges(flat, bins=min(20, max(5, len(flat)))) if flat else 10
    ax.hist([d for d in data], bins=bins, stacked=True, label=_config_names(batch))
    ax.set_xlabel("minimum separation of a run (m)")
    ax.set_ylabel("runs")
    ax.set_title("minimum separation between person and robot")
    ax.legend(title="configuration")
    return fig


def throughput_figure(batch: Batch) -> Figure:
    """Robot cycles against time stopped and against protective stops, one point per run: the
    stops of the run's safety function (``ssm_stops`` in SSM mode, ``protective_stops`` with
    the zones, which SSM leaves at 0)."""
    fig = Figure(figsize=(10, 4), layout="constrained")
    axes = fig.subplots(1, 2)
    colors = matplotlib.colormaps["tab10"]
    stops = frozenset(stops_key(r.stats) for r in batch.ok_runs())
    for ax, metric in ((axes[0], "robot_time_s.stopped"), (axes[1], None)):
        for i, (cid, name) in enumerate(zip(batch.config_ids, _config_names(batch))):
            pts = [(r.value(metric or stops_key(r.stats)), r.value("robot_cycles")) for r in batch.ok_runs(cid)]
            pts = [p for p in pts if None not in p]
            if pts:
                x, y = zip(*pts)
                ax.scatter(x, y, color=colors(i % 10), label=name, alpha=0.8, edgecolor="black")
        ax.set_xlabel("robot stopped (s)" if metric else STOPS_LABELS[stops])
        ax.set_ylabel("robot cycles")
        ax.grid(alpha=0.3)
        ax.legend(title="configuration")
    fig.suptitle("throughput against safety (one point per run)")
    return fig


STOPS_LABELS = {frozenset(): "protective stops", frozenset({"protective_stops"}): "protective stops",
                frozenset({"ssm_stops"}): "protective stops (SSM: ssm_stops)",
                frozenset({"protective_stops", "ssm_stops"}): "protective stops (zones) or ssm_stops (SSM)"}


def heatmap_figure(batch: Batch, layout: dict[str, Any] | None, cell_m: float = 0.1) -> Figure:
    """Where the person was: 2-D histogram of all runs' positions (seconds per cell, log scale)."""
    xs, ys = [], []
    for run in batch.ok_runs():
        path = run.path / "trajectory.csv"
        if path.is_file():
            for x, y in people_paths(read_trajectory(path)).values():  # every person's
                xs.append(x)
                ys.append(y)
    x = np.concatenate(xs) if xs else np.zeros(0)
    y = np.concatenate(ys) if ys else np.zeros(0)
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax = fig.subplots()
    if layout:
        w, h = layout["room"]
    else:
        w, h = (float(np.nanmax(x)) + 0.5, float(np.nanmax(y)) + 0.5) if x.size else (1.0, 1.0)
    bx = np.arange(0.0, w + cell_m, cell_m)
    by = np.arange(0.0, h + cell_m, cell_m)
    counts, _, _ = np.histogram2d(x, y, bins=[bx, by])
    seconds = np.ma.masked_equal(counts.T * ROW_DT, 0.0)
    vmax = max(float(seconds.max()) if seconds.count() else 1.0, 2 * ROW_DT)
    mesh = ax.pcolormesh(bx, by, seconds, cmap="viridis", norm=LogNorm(vmin=ROW_DT, vmax=vmax))
    fig.colorbar(mesh, ax=ax, label="time of the person in the cell (s, all runs)")
    _draw_layout(ax, layout, x, y)
    if layout:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_title(f"where the person was ({len(xs)} runs, {cell_m:g} m cells)")
    return fig


# --- one run -------------------------------------------------------------------------------

def run_layout_figure(layout: dict[str, Any] | None) -> Figure:
    """The floor plan: room, furniture, the zones filled in their colours, robot base, person's start."""
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax = fig.subplots()
    _draw_layout(ax, layout, np.zeros(0), np.zeros(0))
    if layout:
        zones = layout["zones"]
        for name in sorted(zones, key=lambda n: ZONE_ORDER.index(n) if n in ZONE_ORDER else -1):  # stop on top
            pts = zones[name]
            ax.add_patch(Polygon(pts, closed=True, fc=ZONE_COLORS.get(name, "blue"), alpha=0.3, lw=0))
        ax.plot(*layout["robot_base"], marker="s", ms=10, color="black", ls="", label="robot base")
        ax.plot(*layout["person_start"], marker="o", ms=9, color="tab:blue", ls="", label="person's start")
        ax.legend(loc="upper left", fontsize=8)
    else:
        ax.text(0.5, 0.5, "scenario not found: no floor plan", ha="center", va="center", transform=ax.transAxes)
    ax.set_title("the workcell: zones and furniture")
    return fig


def run_path_figure(traj: dict[str, np.ndarray], layout: dict[str, Any] | None) -> Figure:
    """The floor plan with zones and furniture and the person's path coloured by time (with
    several people each one's, named at its start)."""
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax = fig.subplots()
    paths, t = people_paths(traj), traj["t"]
    _draw_layout(ax, layout, np.concatenate([x for x, _ in paths.values()]),
                 np.concatenate([y for _, y in paths.values()]))
    for name, (x, y) in paths.items():
        pts = np.column_stack([x, y]).reshape(-1, 1, 2)
        lines = LineCollection(np.concatenate([pts[:-1], pts[1:]], axis=1), cmap="plasma", lw=1.5)
        lines.set_array(t[:-1] if t.size > 1 else t)
        ax.add_collection(lines)
        if len(paths) > 1 and x.size:
            ax.annotate(name, (x[0], y[0]), fontsize=8, xytext=(4, 4), textcoords="offset points")
    fig.colorbar(lines, ax=ax, label="simulated time (s)")
    if layout:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_title("the person's path" if len(paths) == 1 else "the people's paths")
    return fig


def run_velocity_figure(traj: dict[str, np.ndarray]) -> Figure:
    """The robot's commanded and measured velocity fraction, with the person's zone as a band below."""
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax, band = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [5, 1]})
    t = traj["t"]
    ax.plot(t, traj["robot_velocity_fraction"], label="commanded", color="black", lw=1.2)
    ax.plot(t, traj["robot_speed_fraction"], label="measured", color="tab:blue", lw=0.8, alpha=0.8)
    ax.set_ylabel("velocity fraction")
    ax.set_ylim(-0.05, 1.1)
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    ax.set_title("robot velocity fraction and the person's zone")
    zones = traj["zone"]
    for zone in ZONE_ORDER:
        mask = zones == zone
        if mask.any():
            band.fill_between(t, 0, 1, where=mask, color=ZONE_COLORS[zone], step="mid", lw=0)
    band.set_yticks([])
    band.set_xlabel("simulated time (s)")
    band.set_ylabel("zone", rotation=0, ha="right", va="center")
    band.legend(handles=[Patch(color=ZONE_COLORS[z], label=z) for z in ZONE_ORDER], ncol=3,
                loc="upper right", fontsize=7, bbox_to_anchor=(1.0, -0.6))
    return fig


def run_separation_figure(traj: dict[str, np.ndarray]) -> Figure:
    """The separation between person and robot over time."""
    fig = Figure(figsize=(10, 3.5), layout="constrained")
    ax = fig.subplots()
    ax.plot(traj["t"], traj["separation_m"], color="tab:purple", lw=1)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("separation (m)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if np.isfinite(traj["separation_m"]).any():
        i = int(np.nanargmin(traj["separation_m"]))
        ax.plot(traj["t"][i], traj["separation_m"][i], "o", color="red",
                label=f"minimum {traj['separation_m'][i]:.3f} m at {traj['t'][i]:.1f} s")
        ax.legend(loc="upper right")
    ax.set_title("separation between the person and the robot (sampled at 10 Hz)")
    return fig


# --- writing -------------------------------------------------------------------------------

def batch_figures(batch: Batch) -> dict[str, Figure]:
    """The four batch figures by file name."""
    from hri.run.run_dir import SCENARIO

    # one floor plan for all configurations: the first run's (a sweep of zones draws that run's)
    kept = next((r.path for r in batch.ok_runs() if (r.path / SCENARIO).is_file()), None)
    layout = run_layout(kept, None) if kept is not None else load_layout(batch.meta.get("scenario"))
    return {"zone_times.png": zone_time_figure(batch), "min_separation.png": separation_figure(batch),
            "throughput_safety.png": throughput_figure(batch), "heatmap.png": heatmap_figure(batch, layout)}


def run_figures(run: RunDir) -> dict[str, Figure]:
    """The four figures of one run by file name."""
    path = run.path / "trajectory.csv"
    if not path.exists():
        raise HriError(f"{path}: missing (needed for --plots)")
    traj = read_trajectory(path)  # a FIFO or a device there: named for what it is, not opened
    layout = run_layout(run.path, run.stats.get("scenario"), run.overrides)
    return {"layout.png": run_layout_figure(layout), "path.png": run_path_figure(traj, layout),
            "velocity.png": run_velocity_figure(traj), "separation.png": run_separation_figure(traj)}


def write_plots(loaded: Batch | RunDir, out_dir: Path) -> list[Path]:
    """Save the figures of a batch or a run into ``out_dir``; returns the paths. A link at
    ``out_dir`` is refused (the figures stay inside the folder given), and a link in place of a
    figure is replaced, not followed."""
    if out_dir.is_symlink():
        raise HriError(f"--plots {out_dir}: is a link; the figures go into a folder inside DIR, not where a link points")
    made = not out_dir.exists()
    output_folder(out_dir, "--plots")  # before the figures are drawn
    try:
        figures = batch_figures(loaded) if isinstance(loaded, Batch) else run_figures(loaded)
    except HriError:
        if made:  # a run's files that cannot be drawn leave no empty folder
            out_dir.rmdir()
        raise
    written = []
    for name, fig in figures.items():
        path = out_dir / name
        image = io.BytesIO()
        fig.savefig(image, dpi=110, format="png")
        write_atomic(path, image.getvalue())
        written.append(path)
    return written
