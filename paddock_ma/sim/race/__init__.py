"""The race around the cars: starting worlds (``start``), race control (``control``), per-car rules,
laps and timing (``rules``), pit stops (``pit_service``), the one placement path of a car
(``placement``) and car-car contact (``collisions``).
"""
