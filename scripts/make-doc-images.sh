#!/bin/sh
# Makes the pictures of the README and docs/visualisation.md with the project's own commands.
# Needs the development install (.venv, see the README) and, for the live view, Xvfb and
# xdotool (scripts/install-system-packages.sh). Seed 10: the person walks through the warning
# zone into the stop zone in the first seconds, so every picture has something to show (in
# two_workers, the worker: the README's first picture, at 3 s, as its caption says).
set -eu
cd "$(dirname "$0")/.."
HRI=.venv/bin/hri
PY=.venv/bin/python
IMG=docs/images
RUN=runs/seed10  # named as in the docs: the tree picture's caption shows it
rm -rf "$RUN"

$PY -m hri.view.snapshot $IMG/two_workers.png --scenario two_workers --time 3 --seed 10
$PY -m hri.view.snapshot $IMG/workcell.png --time 4 --seed 10
$PY scripts/live_view_still.py $IMG/live_view.png --time 3
$HRI run coexistence --duration 15 --seed 10 --record $IMG/recording.gif --record-size 480x270 --record-fps 8 --force >/dev/null
$HRI run coexistence --duration 600 --seed 10 --out "$RUN" >/dev/null
$HRI stats "$RUN" --plots >/dev/null
for plot in layout path velocity separation; do cp "$RUN/plots/$plot.png" $IMG/stats_run_$plot.png; done
$HRI render trees/coexistence_robot.xml --run "$RUN" --at 4.5 -o $IMG/tree_status_robot.png --force
$HRI render trees/coexistence_robot.xml -o $IMG/tree_coexistence_robot.png --force
# the animation clips' contact sheets: python -m hri.actor.pictures docs/images
# the batch figures (stats_batch_*.png): docs/statistics.md
