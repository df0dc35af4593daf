"""hri.net.goals: goals numbered per client, followed on the stream, cancelled by number."""

from __future__ import annotations

from hri.net import Network, Node, Service
from hri.net.goals import GoalBoard, GoalClient


def _goals(early_cancels: int = 0):
    """A service whose ``start`` makes the request's goal current and ``cancel`` says whether
    it named it, and two clients (two trees) following the stream ``state``."""
    net = Network()
    server = Node(net.endpoint("server"))
    cancels: list[bool] = []

    def start(request) -> bool:
        goal = board.goal_of(request)
        if board.cancelled_early(goal):
            return False
        board.current = goal
        return True

    def cancel(request) -> None:
        cancels.append(board.cancel_names_current(request))

    service = Service("svc", ["svc"], {"start": start, "cancel": cancel}, streams=["state"])
    board = GoalBoard(service, "state", "job", early_cancels)
    record = server.offer(service)
    clients = []
    for name in ("one", "two"):
        client = Node(net.endpoint(name)).client(record)
        clients.append(GoalClient(client, client.subscribe("state"), "job"))
    return net, board, clients, cancels


def test_goals_are_numbered_per_client_and_matched_by_number_and_client():
    net, board, (one, two), _cancels = _goals()
    first, second, other = one.send("start", {}), one.send("start", {}), two.send("start", {})
    assert (first.number, second.number, other.number) == (1, 2, 1)
    net.advance(0.0)
    board.publish("active")
    net.advance(0.1)
    # the stream shows goal 1 of client "two": only that handle finds itself on it
    assert two.status(other) == "active"
    assert one.status(first) is None and one.status(second) is None
    board.publish("failed", "jammed")
    net.advance(0.2)
    assert two.reason(other, "unspecified") == "jammed"
    assert one.reason(first, "unspecified") == "unspecified"


def test_the_stream_carries_only_changes():
    net, board, (one, _two), _cancels = _goals()
    handle = one.send("start", {})
    net.advance(0.0)
    published = board.service.publisher("state")
    for status in ("active", "active", "succeeded"):
        board.publish(status)
    assert published.seq == 2 and published.state == {"job": 1, "client": one.client.node.id,
                                                       "status": "succeeded"}
    net.advance(0.1)
    assert one.status(handle) == "succeeded"


def test_a_cancel_acts_on_the_current_goal_only_and_one_that_came_early_refuses_its_goal():
    net, _board, (one, two), cancels = _goals(early_cancels=4)
    handle = one.send("start", {})
    net.advance(0.0)
    one.cancel("cancel", handle)
    two.cancel("cancel", handle)  # the same number from another client: not its goal (yet)
    net.advance(0.1)
    assert cancels == [True, False]
    refused, accepted = two.send("start", {}), two.send("start", {})  # two's goal 1 was cancelled first
    net.advance(0.2)
    assert refused.request.value is False and accepted.request.value is True


def test_a_goal_number_that_is_no_integer_is_refused_and_a_failed_request_says_why():
    net, _board, (one, _two), _cancels = _goals()
    refused = one.client.call("start", {"job": True})
    net.advance(0.0)
    assert refused.error.message == "svc: 'job' must be an integer, got True"
    lost = one.send("start", {})
    lost.request.cancel()
    assert GoalClient.call_failure(lost) == {"reason": "cancelled", "error": "cancelled by the caller"}
    assert GoalClient.call_failure(one.send("start", {})) is None
