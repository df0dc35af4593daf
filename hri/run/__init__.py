"""One run: the simulation loop, its services, the tree executors, the safety monitor, faults, statistics."""
