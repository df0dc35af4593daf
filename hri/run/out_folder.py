"""The folder of ``hri run --out DIR``: one run at a time, never two mixed, never half of one.

A run is made in a hidden staging folder inside ``DIR`` (``.hri-run-<letters>-<pid>``): its
inputs first (:func:`hri.run.run_dir.keep_inputs`), then its outputs as it goes
(:func:`hri.run.sim.run_scenario`). :meth:`OutFolder.finish` then puts the new run in place
of an earlier one. Where ``DIR`` holds nothing but a run, that is three renames of folders: the
staging folder out beside ``DIR`` (``.DIR.hri-new-...``), ``DIR`` aside (``.DIR.hri-old-...``,
deleted after), the new run to ``DIR``. So at every instant ``DIR`` is the earlier run whole,
absent, or the new run whole. Where ``DIR`` also holds files of the user's own, the earlier
run's files are moved out one by one (``stats.json`` first, ``manifest.json`` next) and the new
ones in (``stats.json`` last): between the first and the last rename ``DIR`` holds an
incomplete run, never the manifest of one run with the statistics of another. A run killed
(SIGKILL) leaves the earlier run untouched and its staging folders, which the next run into
``DIR`` removes (:func:`hri.base.files.remove_dead_staging`).

A folder that holds a run is written into only with ``--force``; files that are not a run's
(a user's own, and a ``scenario.yaml`` or ``inputs/`` no run wrote) are never touched, and a
link in ``DIR`` is moved out as a link, never followed. A lock on ``DIR`` keeps a second run
out while one is writing there.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
from pathlib import Path

from hri.base.errors import HriError
from hri.base.files import check_output_folder, named, remove_dead_staging, staging_folder
from hri.run.run_dir import INPUTS, MANIFEST, SCENARIO, check_replaceable

STAGING_PREFIX = ".hri-run-"
STATS = "stats.json"
#: The files a run makes (besides ``*.btlog``); ``plots/`` is made from it by ``hri stats --plots``.
MCAP_NAME = "run.mcap"  # hri run --out DIR --mcap
RUN_FILES = (STATS, MANIFEST, "events.jsonl", "trajectory.csv", "traceback.txt", SCENARIO, MCAP_NAME)
RUN_FOLDERS = (INPUTS, "plots")
BTLOG_SUFFIX = ".btlog"
# What a run of an earlier hri left when it was killed: a file filling beside its target
# (``.events.jsonl.`` and mkstemp's eight letters) and the staging folders of its inputs/.
_LEFT_BEHIND = re.compile(r"\.(?:(?:stats\.json|manifest\.json|events\.jsonl|trajectory\.csv|traceback\.txt"
                          r"|scenario\.yaml|run\.mcap|[^/]+\.btlog)\.|inputs-(?:old-)?)[a-z0-9_]{8}")
_OUT_FIRST = {STATS: 0, MANIFEST: 1}  # an earlier run is moved out marker first...
_IN_LAST = {MANIFEST: 1, STATS: 2}  # ...a new one in marker last


def run_entries(folder: Path) -> list[Path]:
    """What of ``folder`` a run made: its files and folders by name, ``stats.json`` first and
    ``manifest.json`` next (the order they leave in)."""
    names = [entry for entry in folder.iterdir()
             if entry.name in RUN_FILES or entry.name in RUN_FOLDERS or entry.name.endswith(BTLOG_SUFFIX)]
    return sorted(names, key=lambda entry: (_OUT_FIRST.get(entry.name, 2), entry.name))


def left_behind(folder: Path) -> list[Path]:
    """The hidden files and folders that runs of earlier versions of hri left in ``folder``
    when killed; they go with the run they belonged to."""
    return [entry for entry in folder.iterdir() if _LEFT_BEHIND.fullmatch(entry.name)]


def _check_kinds(folder: Path, option: str) -> None:
    """Every entry named as a run's is of the kind a run makes (a file, or ``inputs/`` and
    ``plots/`` folders; a link is moved as a link): a folder where ``stats.json`` belongs is a
    user's, not a run's."""
    for entry in run_entries(folder):
        if entry.is_symlink():
            continue
        folder_kind = entry.name in RUN_FOLDERS
        if entry.is_dir() != folder_kind or not (entry.is_dir() or entry.is_file()):
            what = "a folder" if entry.is_dir() else "not a regular file"
            raise HriError(f"{option} {folder}: holds {entry.name}, {what} that no run wrote; choose another folder")


class OutFolder:
    """``hri run --out``'s folder while a run is made: :attr:`staging` is where the run writes;
    :meth:`finish` puts it in place (call it however the run ends)."""

    def __init__(self, path: Path, force: bool = False, option: str = "--out") -> None:
        self.path = Path(path)
        self.option = option
        check_output_folder(self.path, option)
        self._made = not self.path.exists()  # removed again if no run comes to be in it
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise HriError(f"{option} {self.path}: cannot create the folder: {err.strerror or err}") from None
        self._lock = self._take_lock()
        try:
            remove_dead_staging(self.path, STAGING_PREFIX)
            try:  # what a run killed in the middle of a swap left beside the folder
                remove_dead_staging(self.path.absolute().parent, self._beside_prefix)
            except OSError:  # a parent folder one may not read
                pass
            if (self.path / "batch.json").exists():
                raise HriError(f"{option} {self.path}: holds a batch of hri batch, not a run: give another folder")
            check_replaceable(self.path, option)
            _check_kinds(self.path, option)
            earlier = [entry.name for entry in run_entries(self.path)]
            if earlier and not force:
                more = f" and {len(earlier) - 1} more" if len(earlier) > 1 else ""
                raise HriError(f"{option} {self.path}: holds a run ({earlier[0]}{more}); pass --force to "
                               "replace it, or choose another folder")
            self.staging = staging_folder(self.path, STAGING_PREFIX)
        except BaseException:
            os.close(self._lock)
            raise

    def _take_lock(self) -> int:
        """An exclusive lock on the folder for this run (freed when the process ends, however)."""
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise HriError(f"{self.option} {self.path}: another run is writing into this folder") from None
        return fd

    def finish(self) -> None:
        """Put the staged run in place if it got as far as its manifest (a run that failed,
        was interrupted or could not write everything says what ran, with what it wrote),
        else leave the folder as it was (and remove it if it was made for this run); then
        delete the staging folder."""
        if self._lock < 0:
            return
        try:
            if (self.staging / MANIFEST).is_file():
                self._swap()
                self._made = False
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
            os.close(self._lock)
            self._lock = -1
            if self._made:
                try:
                    self.path.rmdir()
                except OSError:  # not empty: something else came to be there meanwhile
                    pass

    @property
    def _beside_prefix(self) -> str:
        """The names of the folders a swap puts beside the run folder."""
        return f".{self.path.absolute().name}.hri-"

    def _swap(self) -> None:
        """The new run in place of the earlier one: the whole folder where it holds nothing
        else, else file by file."""
        if self._only_a_run():
            try:
                self._swap_folders()
                return
            except OSError:  # another file system, a mount point: the renames file by file
                pass
        self._swap_files()

    def _only_a_run(self) -> bool:
        """The folder holds a run's files and the staging folder, nothing else, and is not
        a link nor the current folder (which must stay where it is)."""
        path = self.path.absolute()
        if path.is_symlink() or os.path.samefile(path, os.getcwd()):
            return False
        ours = {entry.name for entry in run_entries(path) + left_behind(path)} | {self.staging.name}
        return all(entry.name in ours for entry in path.iterdir())

    def _swap_folders(self) -> None:
        """Three renames: the staging folder beside the run folder, the run folder aside, the
        staging folder to the run folder; then the earlier run is deleted. An OSError before
        the second leaves everything as it was."""
        path = self.path.absolute()
        new = staging_folder(path.parent, f"{self._beside_prefix}new-")  # names to take
        try:
            aside = staging_folder(path.parent, f"{self._beside_prefix}old-")
        except OSError:
            new.rmdir()
            raise
        try:
            os.chmod(self.staging, stat.S_IMODE(path.stat().st_mode))  # the folder keeps its mode
            os.rename(self.staging, new)
        except OSError:
            new.rmdir()
            aside.rmdir()
            raise
        try:
            os.rename(path, aside / path.name)
        except OSError:
            os.rename(new, self.staging)
            aside.rmdir()
            raise
        os.rename(new, path)
        shutil.rmtree(aside, ignore_errors=True)

    def _swap_files(self) -> None:
        """The earlier run out into the staging folder (deleted with it), the new run in."""
        old = self.staging / ".old"
        old.mkdir()
        for entry in run_entries(self.path) + left_behind(self.path):
            os.rename(entry, old / entry.name)
        new = [entry for entry in self.staging.iterdir() if not entry.name.startswith(".")]
        for entry in sorted(new, key=lambda entry: (_IN_LAST.get(entry.name, 0), entry.name)):
            os.rename(entry, self.path / entry.name)

    def final(self, err: OSError) -> OSError:
        """``err`` naming the file in the run folder instead of its staged copy."""
        if err.filename and Path(err.filename).is_relative_to(self.staging):
            return named(err, self.placed(Path(err.filename)))
        return err

    def placed(self, path: Path) -> Path:
        """Where a file made in the staging folder will be: in the run folder."""
        return self.path / path.relative_to(self.staging) if path.is_relative_to(self.staging) else path
