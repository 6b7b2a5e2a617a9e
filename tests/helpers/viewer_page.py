"""Reading the viewer page in headless Chromium (playwright): where a car is drawn and in which colour,
shared by the viewer and dataset-view tests."""

from __future__ import annotations

import numpy as np

CHROMIUM = "/usr/bin/chromium"      # Debian's chromium package (make install installs it)


def rgb(hex_colour):
    return [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]


def drawn_pixels(page, cars):
    """For each car {id, x, y} (world m): its canvas point by the page's transform and the pixel there."""
    return page.evaluate("""(cars) => {
        const v = window.paddockViewer, ctx = document.getElementById('view').getContext('2d');
        return cars.map((c) => { const [px, py] = v.worldToScreen(c.x, c.y);
            const d = ctx.getImageData(Math.round(px), Math.round(py), 1, 1).data;
            return {id: c.id, px, py, rgb: [d[0], d[1], d[2]], colour: v.carColour(c)}; }); }""", cars)


def yellowest_near(page, point):
    """The most ray-yellow pixel (max r + g - 2b) within 2 px of a world point (a 1-px antialiased line)."""
    return page.evaluate("""(c) => {
        const v = window.paddockViewer, ctx = document.getElementById('view').getContext('2d');
        const [px, py] = v.worldToScreen(c.x, c.y);
        const d = ctx.getImageData(Math.round(px) - 2, Math.round(py) - 2, 5, 5).data;
        let best = null;
        for (let i = 0; i < d.length; i += 4) {
            const score = d[i] + d[i + 1] - 2 * d[i + 2];
            if (best === null || score > best[3]) best = [d[i], d[i + 1], d[i + 2], score];
        }
        return best.slice(0, 3); }""", point)


def assert_cars_drawn_at(page, cars, min_checked=4):
    """Every car standing apart from the others (15 px) shows its own colour at its position."""
    pixels = drawn_pixels(page, cars)
    apart = [p for p in pixels if all(np.hypot(p["px"] - q["px"], p["py"] - q["py"]) > 15 for q in pixels if q is not p)]
    assert len(apart) >= min_checked, pixels
    for p in apart:
        assert p["rgb"] == rgb(p["colour"]), p
    return pixels
