#!/bin/sh
# System packages beyond Python that the test suite uses: Xvfb (a virtual display for the
# --gui test), xdotool (finds and closes the window there) and Mesa's software OpenGL.
# Installs what is missing with apt-get when allowed (root, or sudo without a password);
# otherwise says what to install and goes on: the --gui test then skips with that message.
# Part of the README's test command, so CI runs it.
set -u
# The soak test lists /dev/mqueue before and after (it checks by name when it is not mounted).
if [ ! -d /dev/mqueue ] && [ "$(id -u)" -eq 0 ]; then
    if ! { mkdir /dev/mqueue 2>/dev/null && mount -t mqueue none /dev/mqueue 2>/dev/null; }; then
        rmdir /dev/mqueue 2>/dev/null
        echo "install-system-packages: could not mount /dev/mqueue (the soak test checks queues by name)" >&2
    fi
fi
missing=""
command -v Xvfb >/dev/null 2>&1 || missing="$missing xvfb"
command -v xdotool >/dev/null 2>&1 || missing="$missing xdotool"
[ -e /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so ] || [ -e /usr/lib/aarch64-linux-gnu/dri/swrast_dri.so ] \
    || ls /usr/lib/*/dri/*swrast* >/dev/null 2>&1 || missing="$missing libgl1-mesa-dri"
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-packages: no apt-get; install$missing yourself to run the --gui test" >&2
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"
else
    echo "install-system-packages: not root; run: sudo apt-get install$missing (else the --gui test skips)" >&2
    exit 0
fi
log="${TMPDIR:-/tmp}/hri-apt-$$.log"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if $sudo apt-get install -y -q --no-install-recommends $missing libgl1 >"$log" 2>&1 \
    || { $sudo apt-get update -q >>"$log" 2>&1 && $sudo apt-get install -y -q --no-install-recommends $missing libgl1 >>"$log" 2>&1; }; then
    echo "install-system-packages: installed$missing" >&2
    rm -f "$log"
else
    echo "install-system-packages: apt-get could not install$missing (see $log); the --gui test will skip" >&2
fi
exit 0
