"""User node modules ("plug-ins"): extra node types without editing ``hri``.

A plug-in is a Python module with a function ``register_nodes(registry)`` that registers its
node classes, exactly as the project's own ``hri.actor.nodes`` does (installed as an entry
point of the group ``hri.nodes``, like any other)::

    # my_nodes.py
    from py_trees.common import Status
    from hri.bt import BTNode, Port

    class Beep(BTNode):
        \"\"\"Always SUCCESS; says beep.\"\"\"
        PORTS = (Port("volume", "in", float, 1.0, "how loud"),)
        def update(self) -> Status:
            return Status.SUCCESS

    def register_nodes(registry):
        registry.register("Beep", Beep, "action")

Two ways to load plug-ins:

* :func:`load_plugins` — module names (``my_nodes``, importable from ``sys.path``) or paths
  to ``.py`` files (relative to ``base_dir``, e.g. the scenario's folder), as a scenario's
  ``plugins: [...]`` list or the command line's ``--plugin`` name them;
* :func:`load_entry_point_plugins` — every entry point of the group ``hri.nodes`` of the
  installed distributions (``[project.entry-points."hri.nodes"] my_nodes = "my_nodes"``); an
  entry point may name a module with ``register_nodes`` or the function itself.

Every failure (import error, no ``register_nodes``, an exception while registering, a node ID
registered twice) is one :class:`~hri.base.errors.HriError` line naming the plug-in.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Sequence

from hri.bt.factory import NodeRegistry, register_builtin_nodes
from hri.base.errors import STOPS, HriError, exception_line, shown_path

ENTRY_POINT_GROUP = "hri.nodes"
_LOADED_MARK = "_hri_entry_point_plugins_loaded"
_FILE_MODULES: dict[str, ModuleType] = {}


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or os.sep in spec


def _import_file(path: Path) -> ModuleType:
    real = os.path.realpath(path)
    if real in _FILE_MODULES:
        return _FILE_MODULES[real]
    name = f"hri_plugin_{path.stem}_{abs(hash(real)) % 10**8}"
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _FILE_MODULES[real] = module
    return module


def import_plugin(spec: str, base_dir: str | os.PathLike[str] | None = None,
                  file: str | None = None, line: int | None = None) -> ModuleType:
    """Import the plug-in ``spec`` (module name or ``.py`` path); HriError naming it on failure."""
    spec = spec.strip()
    if not spec:
        raise HriError("plugin: empty module name", file, line)
    if _is_path(spec):
        path = Path(spec)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        if not path.is_file():
            raise HriError(f"plugin {spec!r}: no such file {shown_path(path)!r}", file, line)
        loader: Callable[[], ModuleType] = lambda: _import_file(path)
    else:
        loader = lambda: importlib.import_module(spec)
    try:
        return loader()
    except STOPS:
        raise
    except BaseException as err:  # a plug-in's own bug must not end in a traceback
        raise HriError(f"plugin {spec!r}: cannot import: {exception_line(err)}", file, line) from None


def _register(what: str, register: Any, registry: NodeRegistry, file: str | None, line: int | None) -> None:
    if not callable(register):
        raise HriError(f"{what}: has no register_nodes(registry) function", file, line)
    try:
        register(registry)
    except STOPS:
        raise
    except BaseException as err:
        raise HriError(f"{what}: register_nodes failed: {exception_line(err)}", file, line) from None


def load_plugins(registry: NodeRegistry, modules: Sequence[str] | None,
                 base_dir: str | os.PathLike[str] | None = None,
                 file: str | None = None, line: int | None = None) -> list[str]:
    """Import each plug-in of ``modules`` and call its ``register_nodes(registry)``.

    ``modules`` holds module names or ``.py`` paths (relative to ``base_dir``); ``file`` and
    ``line`` (e.g. the scenario's ``plugins`` key) locate the error message. Returns the
    node IDs the plug-ins added.
    """
    if modules is None:
        return []
    if isinstance(modules, str) or not isinstance(modules, (list, tuple)):
        raise HriError("plugins: must be a list of module names or .py paths", file, line)
    before = set(registry.ids())
    for spec in modules:
        if not isinstance(spec, str):
            raise HriError(f"plugins: {spec!r} is not a module name or a path", file, line)
        module = import_plugin(spec, base_dir, file, line)
        _register(f"plugin {spec.strip()!r}", getattr(module, "register_nodes", None), registry, file, line)
    return sorted(set(registry.ids()) - before)


def _entry_points(group: str) -> Iterable[importlib.metadata.EntryPoint]:
    return importlib.metadata.entry_points(group=group)


def load_entry_point_plugins(registry: NodeRegistry) -> list[str]:
    """Load every ``hri.nodes`` entry point into ``registry`` (once per registry).

    An entry point names a module with ``register_nodes`` or a ``register_nodes``-like
    function. Returns the node IDs added; calling it again on the same registry does nothing.
    """
    if getattr(registry, _LOADED_MARK, False):
        return []
    setattr(registry, _LOADED_MARK, True)
    before = set(registry.ids())
    for entry_point in sorted(_entry_points(ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        what = f"plugin entry point {entry_point.name!r} ({entry_point.value}, group {ENTRY_POINT_GROUP})"
        try:
            target = entry_point.load()
        except STOPS:
            raise
        except BaseException as err:
            raise HriError(f"{what}: cannot import: {exception_line(err)}") from None
        register = getattr(target, "register_nodes", None) if isinstance(target, ModuleType) else target
        _register(what, register, registry, None, None)
    return sorted(set(registry.ids()) - before)


def default_registry() -> NodeRegistry:
    """The built-in nodes and every installed plug-in (the ``hri.nodes`` entry points): the
    project's own nodes (the workcell's, the person's, the robot's) are installed that way
    too, as a user's are."""
    registry = NodeRegistry()
    register_builtin_nodes(registry)
    load_entry_point_plugins(registry)
    return registry


def plugin_registry(modules: Sequence[str] = (), base_dir: str | os.PathLike[str] | None = None) -> NodeRegistry:
    """``default_registry()`` plus the plug-in ``modules``."""
    registry = default_registry()
    load_plugins(registry, list(modules), base_dir)
    return registry
