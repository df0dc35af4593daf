"""``WeightedRandom``: one child picked at random (the thesis's control; not in BehaviorTree.CPP)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from py_trees.common import Status

from hri.bt.node import BTControl, NodeConfig
from hri.bt.node_status import TickResult
from hri.bt.ports import Port, PortError
from hri.bt.value_types import Weights


class WeightedRandom(BTControl):
    """Runs one child picked at random by ``weights`` (one non-negative weight per child).

    The pick uses ``ctx.rng``. It is kept across halts and across FAILURE; only after the
    picked child returns SUCCESS is a new child picked on the next run. The node returns the
    picked child's status.
    """

    PORTS = (Port("weights", "in", Weights, description="one weight per child, e.g. 0.95;0.05"),)

    def __init__(self, config: NodeConfig) -> None:
        super().__init__(config)
        self.picked: int | None = None
        weights = self.literal_input("weights")
        if weights is not None:
            self._check_weights(weights)

    def _check_weights(self, weights: Sequence[float]) -> np.ndarray:
        if len(weights) != len(self.children):
            raise PortError(f"port 'weights': {len(weights)} weights for {len(self.children)} children")
        array = np.asarray(weights, dtype=float)
        if np.any(array < 0) or not np.all(np.isfinite(array)) or array.sum() <= 0:
            raise PortError("port 'weights': weights must be non-negative with a positive sum")
        return array

    def _pick(self) -> int:
        try:
            weights = self._check_weights(self.get_input("weights"))
        except PortError as err:
            if err.file:
                raise
            raise self._error(err.message) from None
        cumulative = np.cumsum(weights / weights.sum())
        index = int(np.searchsorted(cumulative, self.ctx.rng.random(), side="right"))
        index = min(index, len(self.children) - 1)
        while weights[index] == 0:  # guard against rounding at the upper end
            index -= 1
        return index

    def on_tick(self) -> TickResult:
        if self.picked is None:
            self.picked = self._pick()
        child = self.children[self.picked]
        status = child.execute_tick()
        if status is Status.RUNNING:
            return status
        if status is Status.SUCCESS:
            self.picked = None
        self.reset_children()
        return status
