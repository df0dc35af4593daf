"""Action and condition nodes of BehaviorTree.CPP 4.10, one class per module.

=====================  ==============================================================
``AlwaysSuccess``      SUCCESS
``AlwaysFailure``      FAILURE
``Script``             runs a script; SUCCESS
``ScriptCondition``    SUCCESS when a script is true
``SetBlackboard``      writes ``value`` (or copies ``{entry}``) to ``output_key``
``UnsetBlackboard``    removes the entry ``key``
``Sleep``              RUNNING for ``msec`` simulated milliseconds, then SUCCESS
``WasEntryUpdated``    SUCCESS when an entry was written since the last look
=====================  ==============================================================
"""

from hri.bt.actions.always_failure import AlwaysFailure
from hri.bt.actions.always_success import AlwaysSuccess
from hri.bt.actions.script import Script
from hri.bt.actions.script_condition import ScriptCondition
from hri.bt.actions.set_blackboard import SetBlackboard
from hri.bt.actions.sleep import Sleep
from hri.bt.actions.unset_blackboard import UnsetBlackboard
from hri.bt.actions.was_entry_updated import WasEntryUpdated

__all__ = ["AlwaysFailure", "AlwaysSuccess", "Script", "ScriptCondition", "SetBlackboard", "Sleep",
           "UnsetBlackboard", "WasEntryUpdated"]
