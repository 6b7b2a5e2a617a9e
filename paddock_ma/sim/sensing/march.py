"""The ray channels (names, indices, bits) and a ray hit's kinds, defined once: the sensing kernel
(``sensing.sensors``, ``sensing.road_edge``), the config's channel names and the vector table derive
from them. The car channel's broad-phase radius too."""

import math

from ..core.layout import CAR_LENGTH, CAR_WIDTH

# The ray channels, in PaddockJS's listing order (the config's names). A channel's position here is its
# index in the last axis of ``ray_dist`` / ``ray_hit`` (RAY_*) and 1 << position its bit in
# ``channel_mask`` (CH_*).
RAY_CHANNELS = ("road_edge", "kerb", "illegal_surface", "car")
RAY_ROAD_EDGE = 0
RAY_KERB = 1
RAY_ILLEGAL = 2
RAY_CAR = 3
N_RAY_CHANNELS = 4
CH_ROAD_EDGE = 1 << RAY_ROAD_EDGE
CH_KERB = 1 << RAY_KERB
CH_ILLEGAL = 1 << RAY_ILLEGAL
CH_CAR = 1 << RAY_CAR
CH_ALL = (1 << N_RAY_CHANNELS) - 1
CHANNEL_BITS = {name: 1 << i for i, name in enumerate(RAY_CHANNELS)}
assert len(RAY_CHANNELS) == N_RAY_CHANNELS and CHANNEL_BITS["car"] == CH_CAR
KIND_MISS = 0
KIND_EXIT = 1
KIND_ENTRY = 2

HALF_L = 0.5 * CAR_LENGTH
HALF_W = 0.5 * CAR_WIDTH
BODY_RADIUS = math.sqrt(HALF_L * HALF_L + HALF_W * HALF_W)   # ~2.41 m, broad phase

