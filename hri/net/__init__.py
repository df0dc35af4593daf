"""The service network: services found by name, calls and state streams, network quality.

Simulator-independent (no PyBullet here). The parts, one module each, each importing only
those above it in this list:

- :mod:`~hri.net.errors`: the errors (all :class:`~hri.base.errors.HriError`);
- :mod:`~hri.net.codec`: frames on the wire (length-prefixed, versioned, tagged payload);
- :mod:`~hri.net.quality`: latency, jitter, loss, bandwidth per channel and direction;
- :mod:`~hri.net.network`: the deterministic in-process network in simulated time;
- :mod:`~hri.net.transport`: the endpoint interface and the POSIX message-queue transport;
- :mod:`~hri.net.record`: what the broker knows of a service, and how it matches a query;
- :mod:`~hri.net.future`: the outcome of a call, polled by the caller;
- :mod:`~hri.net.stream`: keep-last state streams;
- :mod:`~hri.net.rpc`: services, requests and clients;
- :mod:`~hri.net.node`: a participant tying them together on one endpoint;
- :mod:`~hri.net.broker`: registration with identifier lists and AND/OR discovery;
- :mod:`~hri.net.goals`: goals, requests whose work outlasts their answer, followed on a stream.

Futures, streams, requests and services know their node only as the protocol of what they
use of it (:class:`~hri.net.future.CallKeeper`, :class:`~hri.net.stream.StreamNode`,
:class:`~hri.net.rpc.RpcNode`), so that the node can import them.
"""

from .broker import Broker, BrokerClient, broker_service
from .codec import Frame, Kind, decode_frame, decode_value, encode_frame, encode_value
from .errors import (CallTimeout, Cancelled, CodecError, ConfigError, DiscoveryError, NetError,
                     QueueFull, RemoteError)
from .future import Future
from .network import LocalEndpoint, Network
from .node import Node
from .quality import Link, LinkQuality, NetworkQuality
from .record import ServiceRecord
from .rpc import Client, Request, Service, Setpoint
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
