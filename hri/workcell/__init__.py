"""The workcell: the room and its furniture in PyBullet, parts and their flow, the called flag,
their services and the tree nodes that reach them."""
