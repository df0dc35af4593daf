"""Rotations of the person: quaternion helpers ``(x, y, z, w)`` and the person's axes.

The humanoid model is authored Y-up (x forward, y up, z to the person's right); our world is
z up. :data:`Q_MODEL_TO_WORLD` turns one into the other; rotations in the clip files are
written about the person's axes (forward, left, up) and converted here.
"""

from __future__ import annotations

import math

import numpy as np

_S2 = math.sqrt(0.5)
Q_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
Q_MODEL_TO_WORLD = np.array([_S2, 0.0, 0.0, _S2])


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of (..., 4) quaternions ``(x, y, z, w)``."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, float), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def qconj(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, float)
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def qaxis(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, float)
    return np.array([*(axis * math.sin(angle / 2.0)), math.cos(angle / 2.0)])


def qyaw(yaw: float) -> np.ndarray:
    return np.array([0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)])


def qrotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors (..., 3) by one quaternion."""
    return np.asarray(v, float) @ qmatrix(q).T


def qmatrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def qslerp(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    """Spherical interpolation of (..., 4) quaternion arrays, t scalar or (...)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    t = np.asarray(t, float)[..., None] if np.ndim(t) else float(t)
    dot = np.einsum("...i,...i->...", a, b)[..., None]
    b = np.where(dot < 0.0, -b, b)
    theta = np.arccos(np.minimum(np.abs(dot), 1.0))
    sin = np.sin(theta)
    small = sin < 1e-6
    safe = np.where(small, 1.0, sin)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe)
    out = wa * a + wb * b
    return out / np.sqrt(np.einsum("...i,...i->...", out, out))[..., None]


def quaternion_yaw(q: np.ndarray) -> float:
    x, y, z, w = q
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def wrap_angle(a: float) -> float:
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def person_euler(rotation: dict | None) -> np.ndarray:
    """Quaternion in the person's frame from ``{forward: deg, left: deg, up: deg}``.

    Right-hand rule about each axis, applied in the order forward, left, up (extrinsic).
    """
    rotation = rotation or {}
    unknown = set(rotation) - {"forward", "left", "up"}
    if unknown:
        raise ValueError(f"unknown rotation axes {sorted(unknown)} (use forward, left, up)")
    q = Q_IDENTITY
    for name, axis in (("forward", (1, 0, 0)), ("left", (0, 1, 0)), ("up", (0, 0, 1))):
        q = qmul(qaxis(axis, math.radians(float(rotation.get(name, 0.0)))), q)
    return q


def person_to_model(q_person: np.ndarray) -> np.ndarray:
    """A rotation given in the person's axes, expressed in the model's (Y-up) joint axes."""
    return qmul(qmul(qconj(Q_MODEL_TO_WORLD), q_person), Q_MODEL_TO_WORLD)


def model_to_person(q_model: np.ndarray) -> np.ndarray:
    return qmul(qmul(Q_MODEL_TO_WORLD, q_model), qconj(Q_MODEL_TO_WORLD))


def smoothstep(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3.0 - 2.0 * x)
