"""Seeing a run: PyBullet's window, video recording, stills of the workcell."""
