"""The foundation every layer stands on: errors, numbers, geometry, atomic files, POSIX message queues.

Nothing here imports another part of hri.
"""
