"""Decorator nodes of BehaviorTree.CPP 4.10, one class per module (or a family per module).

============================  =================================================================
``Inverter``                  SUCCESS <-> FAILURE
``ForceSuccess``              SUCCESS once the child finished
``ForceFailure``              FAILURE once the child finished
``Repeat``                    the child until ``num_cycles`` successes (-1: forever)
``RetryUntilSuccessful``      the child again after a FAILURE, up to ``num_attempts``
``KeepRunningUntilFailure``   RUNNING while the child succeeds or runs
``RunOnce``                   the child until it finished once; then SKIPPED (or its result)
``Precondition``              the child when the script ``if`` is true, else ``else``
``Timeout``                   FAILURE when the child runs longer than ``msec`` (simulated)
``Delay``                     the child after ``delay_msec`` (simulated)
``LoopInt`` .. ``LoopString``  the child once per item of ``queue``
``SkipUnlessUpdated``         the child when an entry was written, else SKIPPED
``WaitValueUpdate``           RUNNING until an entry is written, then the child
``SubTree``                   another tree, with a blackboard scope of its own
============================  =================================================================
"""

from hri.bt.decorators.delay import Delay
from hri.bt.decorators.entry_updated import SkipUnlessUpdated, WaitValueUpdate
from hri.bt.decorators.force_failure import ForceFailure
from hri.bt.decorators.force_success import ForceSuccess
from hri.bt.decorators.inverter import Inverter
from hri.bt.decorators.keep_running_until_failure import KeepRunningUntilFailure
from hri.bt.decorators.loop import LoopBool, LoopDouble, LoopInt, LoopString
from hri.bt.decorators.precondition import Precondition
from hri.bt.decorators.repeat import Repeat
from hri.bt.decorators.retry_until_successful import RetryUntilSuccessful
from hri.bt.decorators.run_once import RunOnce
from hri.bt.decorators.subtree import SubTreeNode
from hri.bt.decorators.timeout import Timeout

__all__ = ["Delay", "ForceFailure", "ForceSuccess", "Inverter", "KeepRunningUntilFailure", "LoopBool",
           "LoopDouble", "LoopInt", "LoopString", "Precondition", "Repeat", "RetryUntilSuccessful", "RunOnce",
           "SkipUnlessUpdated", "SubTreeNode", "Timeout", "WaitValueUpdate"]
