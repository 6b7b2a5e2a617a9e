"""render(): cars are drawn in colours no surface has, each controlled driver in its own."""

import numpy as np

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.env.views.render import DESTROYED_COLOUR, PROFILE_COLOURS, SURFACE_COLOURS, driver_colours

SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]},
          "nearby_cars": {"max_cars": 1}}


def test_driver_colours_are_distinct_and_no_surface_has_them():
    colours = {tuple(c) for c in driver_colours(40)}
    assert len(colours) == 40
    others = {tuple(c) for c in SURFACE_COLOURS} | set(PROFILE_COLOURS.values()) | {DESTROYED_COLOUR}
    assert not colours & others
    assert tuple(PROFILE_COLOURS["normal"]) not in {tuple(c) for c in SURFACE_COLOURS}
    np.testing.assert_array_equal(driver_colours(3), driver_colours(8)[:3])     # stable per driver index


def test_normal_profile_cars_are_not_the_kerbs_red():
    env = parallel_env("paddock/oval-batch-v0", drivers=4, controlled_drivers=["car-00", "car-01", "car-02"],
                       sensors=SENSES, participant_interactions={"default_profile": "normal"},
                       render_mode="rgb_array", render_size=1200)
    env.reset(seed=1)
    img = env.render()
    seen = {tuple(c) for c in img.reshape(-1, 3)}
    assert {tuple(c) for c in driver_colours(3)} <= seen          # each controlled driver, its own colour
    assert tuple(PROFILE_COLOURS["normal"]) in seen                # the built-in driver
    kerb = tuple(SURFACE_COLOURS[1])
    assert kerb not in {tuple(c) for c in driver_colours(3)} | set(PROFILE_COLOURS.values())
