"""Control nodes: BehaviorTree.CPP 4.10's, one class per module, and the thesis's WeightedRandom.

=========================  =================================================================
``Sequence``               children in order while they succeed; resumes at a RUNNING child
``AsyncSequence``          a Sequence that yields (RUNNING, wake-up) between two children
``SequenceWithMemory``     a Sequence that keeps its place on FAILURE and on halt
                           (also ``SequenceStar``, ``InterruptableSequence``)
``ReactiveSequence``       every child from the first, every tick
``Fallback``               children in order until one succeeds
``AsyncFallback``          a Fallback that yields between two children
``ReactiveFallback``       every child from the first, every tick, until one succeeds
``Parallel``               every unfinished child every tick; success/failure thresholds
``ParallelAll``            every child to its end; FAILURE from ``max_failures`` failures
``IfThenElse``             condition, then-branch, optional else-branch
``WhileDoElse``            IfThenElse with the condition re-checked every tick
``TryCatch``               a Sequence of all but the last child; the last runs on a FAILURE
``Switch2`` .. ``Switch6`` the child whose case matches a variable, else the last
``WeightedRandom``         one child picked at random by ``weights``
=========================  =================================================================
"""

from hri.bt.controls.async_fallback import AsyncFallback
from hri.bt.controls.async_sequence import AsyncSequence
from hri.bt.controls.fallback import Fallback
from hri.bt.controls.if_then_else import IfThenElse
from hri.bt.controls.parallel import Parallel
from hri.bt.controls.parallel_all import ParallelAll
from hri.bt.controls.reactive_fallback import ReactiveFallback
from hri.bt.controls.reactive_sequence import ReactiveSequence
from hri.bt.controls.sequence import Sequence
from hri.bt.controls.sequence_with_memory import SequenceWithMemory
from hri.bt.controls.switch import Switch2, Switch3, Switch4, Switch5, Switch6
from hri.bt.controls.try_catch import TryCatch
from hri.bt.controls.weighted_random import WeightedRandom
from hri.bt.controls.while_do_else import WhileDoElse

__all__ = ["AsyncFallback", "AsyncSequence", "Fallback", "IfThenElse", "Parallel", "ParallelAll",
           "ReactiveFallback", "ReactiveSequence", "Sequence", "SequenceWithMemory", "Switch2", "Switch3",
           "Switch4", "Switch5", "Switch6", "TryCatch", "WeightedRandom", "WhileDoElse"]
