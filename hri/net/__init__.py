"""The service network: services found by name, calls and state streams, network quality.

Simulator-independent (no PyBullet here). The parts, one module each:

- :mod:`~hri.net.codec`: frames on the wire (length-prefixed, versioned, tagged payload);
- :mod:`~hri.net.broker`: registration with identifier lists and AND/OR discovery;
- :mod:`~hri.net.quality`: latency, jitter, loss, bandwidth per channel and direction;
- :mod:`~hri.net.network`: the deterministic in-process network in simulated time;
- :mod:`~hri.net.transport`: the endpoint interface and the POSIX message-queue transport;
- :mod:`~hri.net.rpc`: services, requests, clients and futures;
- :mod:`~hri.net.stream`: keep-last state streams;
- :mod:`~hri.net.node`: a participant tying them together on one endpoint;
- :mod:`~hri.net.goals`: goals, requests whose work outlasts their answer, followed on a stream;
- :mod:`~hri.net.errors`: the errors (all :class:`~hri.base.errors.HriError`).
"""

from .broker import Broker, BrokerClient, ServiceRecord, broker_service
from .codec import Frame, Kind, decode_frame, decode_value, encode_frame, encode_value
from .errors import (CallTimeout, Cancelled, CodecError, ConfigError, DiscoveryError, NetError,
                     QueueFull, RemoteError)
from .network import LocalEndpoint, Network
from .node import Node
from .quality import Link, LinkQuality, NetworkQuality
from .rpc import Client, Future, Request, Service, Setpoint
from .stream import Publisher, Subscription
from .transport import Endpoint, MqEndpoint, MqTransport

__all__ = [
    "Broker", "BrokerClient", "ServiceRecord", "broker_service",
    "Frame", "Kind", "decode_frame", "decode_value", "encode_frame", "encode_value",
    "CallTimeout", "Cancelled", "CodecError", "ConfigError", "DiscoveryError", "NetError",
    "QueueFull", "RemoteError",
    "LocalEndpoint", "Network", "Node", "Link", "LinkQuality", "NetworkQuality",
    "Client", "Future", "Request", "Service", "Setpoint", "Publisher", "Subscription",
    "Endpoint", "MqEndpoint", "MqTransport",
]
