"""Recordings mark the room's x and y axes, so that a frame can be matched with the plots."""

from __future__ import annotations

import numpy as np

from hri.view.record import AXIS_COLOUR, AXIS_LENGTH_M, _font, camera_matrices, draw_axes, project


def test_the_axes_are_drawn_from_the_origin_corner_along_x_and_y():
    width, height = 800, 450
    view, projection = camera_matrices((8.0, 6.0), width, height)
    frame = draw_axes(np.zeros((height, width, 3), dtype=np.uint8), view, projection, _font(height))
    origin, x_tip, y_tip = project(np.array([[0, 0, 0.01], [AXIS_LENGTH_M, 0, 0.01], [0, AXIS_LENGTH_M, 0.01]]),
                                   view, projection, width, height)
    for tip in (x_tip, y_tip):
        middle = ((origin + tip) / 2).astype(int)
        assert tuple(frame[middle[1], middle[0]]) == AXIS_COLOUR
    assert tuple(frame[height // 2, width // 2]) == (0, 0, 0)  # nothing else is drawn
