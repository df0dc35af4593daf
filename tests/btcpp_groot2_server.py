"""BehaviorTree.CPP's ``Groot2Publisher`` serving a tree in a process of its own, ticked on demand.

behaviortreepy holds Python's interpreter lock while it ticks, so a breakpoint that stops the
tick in BehaviorTree.CPP would stop a test client in the same process too: the tree runs here.

    python btcpp_groot2_server.py PORT HEARTBEAT_MS TREE.xml

prints ``ready``; then, for each line ``tick`` it reads, ticks the tree once
(``tick_once()``) and prints the status it returned. It ends at the end of its input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import behaviortreepy as bt


def main(port: int, heartbeat_ms: int, xml: str) -> None:
    tree = bt.BehaviorTreeFactory().create_tree_from_text(xml)
    publisher = bt.Groot2Publisher(tree, port)
    publisher.set_max_heartbeat_delay(heartbeat_ms)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "tick":
            print(tree.tick_once().name, flush=True)
    del publisher


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]).read_text(encoding="utf-8"))
