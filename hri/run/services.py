"""The simulation's side of the service network: the broker and every service the trees reach.

One :class:`~hri.net.Node` (endpoint ``simulation``, the first of the run's
:class:`~hri.net.Network`) offers these services (identifiers, specific to general, in
brackets) and registers them with the run's broker:

- ``broker`` (``broker``, ``registry``): :mod:`hri.net.broker`;
- ``actor`` (``actor-server``, ``actor``, ``person``): :mod:`hri.actor.service`; with several
  people one for each, ``actor-NAME`` (``person-NAME`` first);
- ``robot`` (``lbr-iisy-1``, ``lbr-iisy``, ``industrial-robot``, ``robot`` for the LBR iisy;
  ``UR-5-1``, ``UR-5``, ... for the UR-5): :mod:`hri.robot.service`;
- ``parts`` (``part-manager``, ``parts``): :mod:`hri.workcell.parts_service`;
- ``called`` (``called-flag``, ``called``): :mod:`hri.workcell.called` (each person's flag);
- ``safety`` (``safety-monitor``, ``safety``): :mod:`hri.run.safety_link`;
- for an arm built from a Denavit–Hartenberg table that declares one, its kinematics service
  (the UR-5's ``ur5-kinematics``: ``inverse-kinematic``, ``UR-5``, ``service``):
  :func:`hri.kinematics.service.dh_kinematics_service`.

Each service's traffic is its own channel, named like the service: its network quality is
``net.<service>`` in the scenario (``net.safety.latency``, ``net.robot.loss``, ...).
The trees find them through the broker (a tree executor knows only the broker's address)
and reach them only through the network, in one process or in processes of their own
(:mod:`hri.run.tree_host`, :mod:`hri.run.tree_process`). :meth:`SimulationServices.publish` sends
the state streams before the trees tick; the simulation calls the network's ``advance``
every physics step, so requests are handled at their arrival time.
"""

from __future__ import annotations

from collections.abc import Sequence

from hri.actor.server import ActorServer
from hri.actor.service import ActorService
from hri.workcell.called import CalledFlags, CalledService
from hri.base.geometry import Pose
from hri.kinematics.service import dh_kinematics_service
from hri.net import Broker, Network, Node, Service, broker_service
from hri.workcell.parts import PartManager
from hri.workcell.parts_service import parts_service
from hri.robot.arm import RobotArm
from hri.robot.service import RobotService
from hri.run.safety_link import SafetyService


class SimulationServices:
    """The broker and the simulation's services on one node of ``network``."""

    def __init__(self, network: Network, actors: Sequence[tuple[ActorServer, str | None]], robot: RobotArm,
                 parts: PartManager, called: CalledFlags) -> None:
        """``actors``: each person's actor server and, with several people, the person's name."""
        self.network = network
        self.node = Node(network.endpoint("simulation"))
        self.broker = Broker()
        self.actors = [ActorService(server, name) for server, name in actors]
        self.robot = RobotService(robot)
        self.called = CalledService(called)
        self.safety = SafetyService()
        self.node.offer(broker_service(self.broker))
        for service in (*(actor.service for actor in self.actors), self.robot.service, parts_service(parts),
                        self.called.service, self.safety.service, *_table_services(robot)):
            self.broker.register(self.node.offer(service))

    @property
    def broker_address(self) -> int:
        return self.node.id

    def publish(self, person: Pose, zone: str | None, speed_cap: float | None = None,
                name: str | None = None) -> None:
        """The state streams, before the trees tick: goals, motion, flag (when they changed), pose
        (the nearest person's, ``name`` with several people; and the SSM speed cap)."""
        for actor in self.actors:
            actor.publish()
        self.robot.publish()
        self.called.publish()
        self.safety.publish(person, zone, speed_cap, name)


def _table_services(robot: RobotArm) -> list[Service]:
    """The kinematics service an arm's Denavit–Hartenberg table declares (``service:``), on the
    arm's joints and base: the UR-5's ``ur5-kinematics``, found as ``inverse-kinematic``,
    ``UR-5``, ``service``, taking 8 set-points a second, as in the original service network."""
    dh = robot.arm_model.dh
    if dh is None or dh.service is None:
        return []
    base = robot.base_pose
    return [dh_kinematics_service(dh, joints=robot.joint_positions, base_pose=(base.position, base.orientation))]
