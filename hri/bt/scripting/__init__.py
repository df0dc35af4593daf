"""BehaviorTree.CPP 4.10's scripting language: the ``code`` of ``Script`` and
``ScriptCondition``, and the pre- and post-conditions (``_skipIf``, ``_post``, ...).

    script = parse_script("counter += 1; done := counter >= 3")   # when the tree loads
    script.run(blackboard, enums)                                  # at a tick: the last value
    script.truth(blackboard, enums)                                # the value as a condition

Values are Python's: int (C++ int64), float (double), str, bool (an integer 0/1 to the
operators), see :mod:`hri.bt.scripting.values`. :func:`format_value` prints a value as
BehaviorTree.CPP prints it into a string (``2.500000``).
"""

from hri.bt.scripting.errors import ScriptError, ScriptSyntaxError
from hri.bt.scripting.script import Script, parse_script
from hri.bt.scripting.values import format_value

__all__ = ["Script", "ScriptError", "ScriptSyntaxError", "format_value", "parse_script"]
