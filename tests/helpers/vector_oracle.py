"""An independent oracle of the observation vector: each entry computed from the observation object
with the scales the vector's docstring documents (``sim.sensing.vectors``)."""

import math

from paddock_ma.env.observations import WHEEL_NAMES


def clamp(x, lo, hi):
    return min(max(x, lo), hi)


MISS = {"distanceRatio": 1.0, "hit": 0.0, "kindExit": 0.0, "kindEntry": 0.0, "relativeSpeedKph": 0.0}


def track_curvature(k, track_length):
    """PaddockJS's ``track-curvature`` entry from a curvature in 1/m (sim.sensing.vectors module docstring)."""
    return abs(k) * track_length / 3600 / 28


def expected_vector(obj, spec_obj, track_length):
    """{schema name: value} computed from the observation object with the documented scales."""
    s, race, track = obj["self"], obj["race"], obj["track"]
    e = {
        "self.speedKph": s["speed_kph"] / 400, "self.speedMetersPerSecond": s["speed_meters_per_second"] / 120,
        "self.steeringAngleRadians": s["steering_angle_radians"] / math.pi,
        "self.throttle": s["throttle"], "self.brake": s["brake"],
        "self.lateralG": s["lateral_g"] / 8, "self.longitudinalG": s["longitudinal_g"] / 6,
        "self.gripUsage": s["grip_usage"] / 2, "self.slipAngleRadians": s["slip_angle_radians"] / math.pi,
        "self.tractionLimited": float(s["traction_limited"]),
        "self.lapProgressRatio": clamp(s["lap_progress_meters"] / track_length, 0, 1),
        "self.trackOffsetMeters": s["track_offset_meters"],
        "self.trackHeadingErrorRadians": s["track_heading_error_radians"] / math.pi,
        "self.onTrack": float(s["on_track"]), "self.inPitLane": float(s["in_pit_lane"]),
        "self.tireEnergy": s["tire_energy"] / 100, "self.pitIntent": s["pit_intent"] / 2,
        "self.pitStopActive": float(s["pit_stop_status"] not in ("pending", "completed")),
        "race.positionNormalized": race["position_normalized"],
        "race.raceModeGreen": float(race["race_mode"] == "green"),
        "race.raceModeSafetyCar": float(race["race_mode"] == "safety-car"),
        "race.redFlag": float(race["red_flag"]), "race.pitLaneOpen": float(race["pit_lane_open"]),
        "track.curvature": track_curvature(track["curvature"], track_length),
    }
    physical = spec_obj["profile"] == "physical-driver"
    if physical:
        e["self.yawRateRadiansPerSecond"] = s["yaw_rate_radians_per_second"] / math.pi
        rel = obj["track_relation"]
        e["trackRelation.leftBoundaryMeters"] = rel["left_boundary_meters"]
        e["trackRelation.rightBoundaryMeters"] = rel["right_boundary_meters"]
        e["trackRelation.legalWidthMeters"] = rel["legal_width_meters"]
        assert tuple(p["id"] for p in obj["contact_patches"]) == tuple(n.replace("_", "-") for n in WHEEL_NAMES)
        for n, p in enumerate(obj["contact_patches"]):
            e[f"contactPatches[{n}].present"] = float(p["present"])
            e[f"contactPatches[{n}].surfaceCode"] = p["surface_code"] / 5
            e[f"contactPatches[{n}].onLegalSurface"] = float(p["on_legal_surface"])
            e[f"contactPatches[{n}].signedOffsetMeters"] = p["signed_offset_meters"]
    for i, q in enumerate(track["lookahead"]):
        e[f"track.lookahead[{i}].curvature"] = track_curvature(q["curvature"], track_length)
        e[f"track.lookahead[{i}].headingDeltaRadians"] = q["heading_delta_radians"] / math.pi
    for i, r in enumerate(obj["rays"]):
        n = r["length_meters"]
        groups = ("track", "car", "kerb", "illegalSurface") if physical else ("track", "car")
        fields = {"track": ("distanceRatio", "hit", "kindExit", "kindEntry"), "car": ("distanceRatio", "hit",
                  "relativeSpeedKph"), "kerb": ("distanceRatio", "hit"), "illegalSurface": ("distanceRatio", "hit")}
        for g in groups:                      # a channel not asked for reads its miss values
            for f in fields[g]:
                e[f"rays[{i}].{g}.{f}"] = MISS[f]
        if "track" in r:
            e[f"rays[{i}].track.distanceRatio"] = clamp(r["track"]["distance_meters"] / n, 0, 1)
            e[f"rays[{i}].track.hit"] = float(r["track"]["hit"])
            e[f"rays[{i}].track.kindExit"] = float(r["track"]["kind"] == "exit")
            e[f"rays[{i}].track.kindEntry"] = float(r["track"]["kind"] == "entry")
        if "kerb" in r and physical:
            e[f"rays[{i}].kerb.distanceRatio"] = clamp(r["kerb"]["distance_meters"] / n, 0, 1)
            e[f"rays[{i}].kerb.hit"] = float(r["kerb"]["hit"])
        if "illegal_surface" in r and physical:
            e[f"rays[{i}].illegalSurface.distanceRatio"] = clamp(r["illegal_surface"]["distance_meters"] / n, 0, 1)
            e[f"rays[{i}].illegalSurface.hit"] = float(r["illegal_surface"]["hit"])
        if "car" in r:
            e[f"rays[{i}].car.distanceRatio"] = clamp(r["car"]["distance_meters"] / n, 0, 1)
            e[f"rays[{i}].car.hit"] = float(r["car"]["hit"])
            e[f"rays[{i}].car.relativeSpeedKph"] = r["car"]["relative_speed_kph"] / 200
    near = spec_obj["nearby_cars"]
    radius = near["radius_meters"]
    for i in range(near["max_cars"] if near["enabled"] else 0):
        p = f"nearbyCars[{i}]"
        if i < len(obj["nearby_cars"]):
            c = obj["nearby_cars"][i]
            e.update({f"{p}.present": 1.0,
                      f"{p}.relativeForwardRatio": clamp(c["relative_forward_meters"] / radius, -1, 1),
                      f"{p}.relativeRightRatio": clamp(c["relative_right_meters"] / radius, -1, 1),
                      f"{p}.relativeDistanceRatio": clamp(c["relative_distance_meters"] / radius, 0, 1),
                      f"{p}.relativeSpeedKph": c["relative_speed_kph"] / 200,
                      f"{p}.relativeHeadingRadians": c["relative_heading_radians"] / math.pi,
                      f"{p}.ahead": float(c["ahead"]), f"{p}.sameLap": float(c["same_lap"])})
            if physical:
                ttc = c["time_to_contact_seconds"]
                e[f"{p}.behind"] = float(c["behind"])
                e[f"{p}.closingRateMetersPerSecond"] = c["closing_rate_meters_per_second"] / 100
                e[f"{p}.timeToContactSeconds"] = 1.0 if ttc is None else clamp(ttc / 10, 0, 1)
                e[f"{p}.leftOverlap"] = float(c["left_overlap"])
                e[f"{p}.rightOverlap"] = float(c["right_overlap"])
        else:
            e.update({f"{p}.present": 0.0, f"{p}.relativeForwardRatio": 0.0, f"{p}.relativeRightRatio": 0.0,
                      f"{p}.relativeDistanceRatio": 1.0, f"{p}.relativeSpeedKph": 0.0,
                      f"{p}.relativeHeadingRadians": 0.0, f"{p}.ahead": 0.0, f"{p}.sameLap": 0.0})
            if physical:
                e.update({f"{p}.behind": 0.0, f"{p}.closingRateMetersPerSecond": 0.0,
                          f"{p}.timeToContactSeconds": 1.0, f"{p}.leftOverlap": 0.0, f"{p}.rightOverlap": 0.0})
    return e
