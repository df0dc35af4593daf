"""A port that holds a script (Script's ``code``, Precondition's ``if``): parsed once.

A literal script is parsed when the tree loads, so a syntax error is a load-time
``FILE:LINE: ... (column N)``. A script read from the blackboard (``code="{key}"``) is parsed
when the node ticks, again only when the text changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hri.bt.ports import PortError

if TYPE_CHECKING:
    from hri.bt.scripting import Script, ScriptSyntaxError


def parse_or_error(code: str, what: str) -> "Script":
    """``parse_script(code)``; PortError ``what: message (column N)`` on a syntax error."""
    from hri.bt.scripting import ScriptSyntaxError, parse_script  # lark only for trees with scripts

    try:
        return parse_script(code)
    except ScriptSyntaxError as err:
        raise PortError(f"{what}: {syntax_message(err)}") from None


def syntax_message(err: "ScriptSyntaxError") -> str:
    """A syntax error as one line: the message and the column inside the script."""
    column = getattr(err, "column", None)
    return f"{err.message} (column {column})" if column else err.message


class ScriptPort:
    """The script in port ``port`` of ``node``: parsed at load when literal.

    An empty literal (``code=""``) is no script, as in BehaviorTree.CPP, which never parses
    it: a Script node then does nothing, a node that needs a result fails when it ticks.
    """

    def __init__(self, node: Any, port: str) -> None:
        self.node = node
        self.port = port
        literal = node.literal_input(port)
        if literal is None and node.input_key(port) is None:
            raise PortError(f"missing port {port!r}")
        self.script = parse_or_error(literal, f"port {port!r}") if literal else None

    def required(self) -> "Script":
        """:meth:`current`, or a PortError naming the node when the port holds no script."""
        script = self.current()
        if script is None:
            raise self.node._error(f"port {self.port!r}: the script is empty")
        return script

    def current(self) -> "Script | None":
        """The script to run now (read again from the blackboard when it is a reference)."""
        if self.node.input_key(self.port) is None:
            return self.script
        code = self.node.get_input(self.port)
        if not code:
            return None
        if self.script is None or self.script.code != code:
            try:
                self.script = parse_or_error(code, f"port {self.port!r}")
            except PortError as err:
                raise self.node._error(err.message) from None
        return self.script
