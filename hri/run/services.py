"""The simulation's side of the service network: the broker and every service the trees reach.

One :class:`~hri.net.Node` (endpoint ``simulation``, the first of the run's
:class:`~hri.net.Network`) offers these services (identifiers, specific to general, in
brackets) and registers them with the run's broker:

- ``broker`` (``broker``, ``registry``): :mod:`hri.net.broker`;
- ``actor`` (``actor-server``, ``actor``, ``person``): :mod:`hri.actor.service`;
- ``robot`` (``lbr-iisy-1``, ``lbr-iisy``, ``industrial-robot``, ``robot``): :mod:`hri.robot.service`;
- ``parts`` (``part-manager``, ``parts``): :mod:`hri.workcell.parts_service`;
- ``called`` (``called-flag``, ``called``): :mod:`hri.workcell.called`;
- ``safety`` (``safety-monitor``, ``safety``): :mod:`hri.run.safety_link`.

Each service's traffic is its own channel, named like the service: its network quality is
``net.<service>`` in the scenario (``net.safety.latency``, ``net.robot.loss``, ...).
The trees find them through the broker (a tree executor knows only the broker's address)
and reach them only through the network, in one process or in processes of their own
(:mod:`hri.run.tree_host`, :mod:`hri.run.tree_process`). :meth:`SimulationServices.publish` sends
the state streams before the trees tick; the simulation calls the network's ``advance``
every physics step, so requests are handled at their arrival time.
"""

from __future__ import annotations

from hri.actor.server import ActorServer
from hri.actor.service import ActorService
from hri.workcell.called import CalledFlag, CalledService
from hri.base.geometry import Pose
from hri.net import Broker, Network, Node, broker_service
from hri.workcell.parts import PartManager
from hri.workcell.parts_service import parts_service
from hri.robot.arm import RobotArm
from hri.robot.service import RobotService
from hri.run.safety_link import SafetyService


class SimulationServices:
    """The broker and the simulation's services on one node of ``network``."""

    def __init__(self, network: Network, actor: ActorServer, robot: RobotArm, parts: PartManager,
                 called: CalledFlag) -> None:
        self.network = network
        self.node = Node(network.endpoint("simulation"))
        self.broker = Broker()
        self.actor = ActorService(actor)
        self.robot = RobotService(robot)
        self.called = CalledService(called)
        self.safety = SafetyService()
        self.node.offer(broker_service(self.broker))
        for service in (self.actor.service, self.robot.service, parts_service(parts), self.called.service,
                        self.safety.service):
            self.broker.register(self.node.offer(service))

    @property
    def broker_address(self) -> int:
        return self.node.id

    def publish(self, person: Pose, zone: str | None, speed_cap: float | None = None) -> None:
        """The state streams, before the trees tick: goal, motion, flag (when they changed), pose
        (and the SSM speed cap)."""
        self.actor.publish()
        self.robot.publish()
        self.called.publish()
        self.safety.publish(person, zone, speed_cap)
