"""A plug-in of the bad-input corpus: node types whose constructors fail, as a plug-in's bug would.

Each is registered fine, so the scenarios that name this module load it; the tree fails when
it is built.
"""

import sys

from py_trees.common import Status

from hri.bt import BTNode


class Grumpy(BTNode):
    """Its constructor raises RuntimeError (a service it needs is not there)."""

    def __init__(self, config):
        super().__init__(config)
        raise RuntimeError("no licence server for the gripper")

    def update(self):
        return Status.SUCCESS


class Quitter(BTNode):
    """Its constructor calls sys.exit(0): an exception that is not an Exception, and a status
    that would end hri as if all were well."""

    def __init__(self, config):
        super().__init__(config)
        sys.exit(0)

    def update(self):
        return Status.SUCCESS


def register_nodes(registry):
    registry.register("Grumpy", Grumpy, "action")
    registry.register("Quitter", Quitter, "action")
