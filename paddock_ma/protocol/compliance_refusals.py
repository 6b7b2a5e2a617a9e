"""The refusals of the compliance script: requests a worker must answer with an error and no change.

Malformed JSON, unknown types, missing or extra fields, wrong types, out-of-range worlds, bad encodings,
seeds, options, actions, placements, result and state options, snapshots and protocol versions; each
function adds its request(s) to the script being built (``compliance_script._Script``, ``s``), and
``bad_requests`` lists them in the order the script sends them."""

from __future__ import annotations

import base64
import functools

from .codec import F32_ENCODING, pack_f32


def missing_brake(s):
    d0 = s.drivers[0]
    acts = s.actions()
    del acts[d0]["brake"]
    s.add("step", actions=acts)


def unknown_driver(s):
    acts = s.actions()
    acts["no-such-driver"] = s.action()
    s.add("step", actions=acts)


def wrong_type_action(s):
    d0 = s.drivers[0]
    acts = s.actions()
    acts[d0]["steering"] = "0.5"
    s.add("step", actions=acts)


def boolean_action(s):
    d0 = s.drivers[0]
    acts = s.actions()
    acts[d0]["throttle"] = True
    s.add("step", actions=acts)


def typo_field(s):
    s.add("step", action=s.actions())


def env_out_of_range(s):
    w = s.w
    s.add("step", env=w, actions=s.actions())


def env_negative(s):
    s.add("getObservation", env=-1)


def env_boolean(s):
    s.add("getState", env=True)


def envs_bad(s):
    w = s.w
    s.add("step", envs=[], actions=[])
    s.add("step", envs=[w], actions=[s.actions()])
    s.add("step", envs=[0, 0], actions=[s.actions(), s.actions()])
    s.add("step", env=0, envs=[0], actions=[s.actions()])
    s.add("reset", envs="some", options={"seed": 1})


def encoding_bad(s):
    s.add("step", actions=s.actions(), encoding="f16-base64")


def seeds_bad(s):
    s.add("reset", options={"seed": "7"})
    s.add("reset", options={"seed": -1})
    s.add("reset", options={"seed": 2 ** 63})
    s.add("reset", options={"seed": 1.5})
    s.add("reset", options=[1, 2])


def config_key_bad(s):
    w = s.w
    s.add("reset", options={"seed": 3, "episode": {"maxSteps": 0}}, **({"envs": "all"} if w > 1 else {}))
    s.add("reset", options={"seed": 3, "noSuchKey": 1}, **({"envs": "all"} if w > 1 else {}))


def extra_field(s):
    s.add("getActionSpec", verbose=True)
    s.add("hello", protocolVersion="1.0", token="x")


def get_state_bad(s):
    s.add("getState", stateOptions={"output": "everything"})
    s.add("getState", stateOptions="full")
    s.add("getState", resultOptions={"observationScope": "all"})
    s.add("getState", resultOptions={"stateOutput": "maximal"})


def reset_drivers_bad(s):
    d0 = s.drivers[0]
    s.add("resetDrivers", placements={"no-such-driver": s.placement()})
    place = s.placement()
    place["distanceMeters"] = "far"
    s.add("resetDrivers", placements={d0: place})
    s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"observationScope": "some"})
    s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"stateOutput": "maximal"})
    s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"colour": "red"})
    s.add("resetDrivers", placements={})
    s.add("resetDrivers")
    s.add("resetDrivers", placements=[s.placement()])


def restore_bad(s):
    s.add("restore", snapshot=42)
    s.add("restore")
    s.add("restore", snapshot="not base64 at all!")
    s.add("restore", snapshot=base64.b64encode(b"[1,2,3]").decode("ascii"))


def not_an_object(s):
    s.raw('[{"id":{id},"type":"hello"}]')
    s.raw('"hello {id}"')
    s.raw("null")
    s.raw("{id}")
    s.raw("{}")


def unknown_type(s):
    s.add("launch")
    s.add("Step", actions=s.actions())
    s.add("step:result")
    s.raw('{"id":{id},"type":7}')
    s.raw('{"id":{id}}')
    s.raw('{"id":{id},"type":null}')


def non_finite_text(s):
    d0 = s.drivers[0]
    s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":NaN,"throttle":0,"brake":0}}}')
    s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":0,"throttle":Infinity,"brake":0}}}')
    s.raw('{"id":{id},"type":"reset","options":{"seed":-Infinity}}')
    s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":1e400,"throttle":0,"brake":0}}}')


def duplicate_keys(s):
    d0 = s.drivers[0]
    s.raw('{"id":{id},"type":"getState","type":"getState"}')
    s.raw('{"id":{id},"id":{id},"type":"hello"}')
    s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":0,"steering":0.1,"throttle":0,"brake":0}}}')


def invalid_utf8(s):
    s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xc3\x28"}')
    s.raw_bytes(b'{"id":', b',"type":"hello","client":"\x80abc"}')
    s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xc0\xaf"}')
    s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xed\xa0\x80"}')    # a surrogate in UTF-8 form
    s.raw_bytes(b'\xef\xbb\xbf{"id":', b',"type":"hello"}')                # a byte order mark


def lone_surrogates(s):
    s.raw('{"id":{id},"type":"hello","client":"\\ud800"}')
    s.raw('{"id":{id},"type":"hello","client":"x\\udfff"}')
    s.raw('{"id":{id},"type":"hello","client":"\\udc00\\ud800"}')
    s.raw('{"id":{id},"type":"hello","\\ud83d":"key"}')
    s.raw('{"id":{id},"type":"hello","client":"\\ud83d\\ude00 paired is fine"}')      # accepted


def huge_integers(s):
    s.raw('{"id":18446744073709551616,"type":"hello"}')
    s.raw('{"id":{id},"type":"reset","options":{"seed":' + "9" * 40 + "}}")
    s.raw('{"id":-9223372036854775809,"type":"hello"}')
    s.raw('{"id":18446744073709551615,"type":"getActionSpec"}')                     # accepted: fits 64 bits
    s.raw('{"id":-9223372036854775808,"type":"getActionSpec"}')                     # accepted


def deep_nesting(s):
    s.raw('{"id":{id},"type":"hello","client":' + "[" * 40 + "]" * 40 + "}")
    s.raw('{"id":{id},"type":"step","actions":' + '{"a":' * 40 + "1" + "}" * 40 + "}")


def broken_json(s):
    s.raw('{"id":{id},"type":"step"')
    s.raw('{"id":{id},"type":"hello"} trailing')
    s.raw('{"id":{id},"type":"hello"}{"id":0,"type":"hello"}')
    s.raw("{'id':{id},'type':'hello'}")
    s.raw('{"id":{id},"type":"hello",}')
    s.raw("\x00")


def ids(s):
    s.raw('{"id":{"n":{id}},"type":"hello"}')
    s.raw('{"id":true,"type":"hello"}')
    s.raw('{"id":[{id}],"type":"hello"}')
    s.add("hello", mid="x" * 257)
    s.add("getActionSpec", mid="ÿ" * 256)                                       # accepted: at the cap
    s.add("getActionSpec", mid=-7)
    s.add("getActionSpec", mid=0)


def framing_tolerance(s):                        # accepted: CR before the newline, spaces around
    s.raw('{"id":{id},"type":"getActionSpec"}\r')
    s.raw('  {"id":{id},"type":"getActionSpec"}\t')


def batched_bad(s):
    w = s.w
    s.add("step", envs="all", actions=[s.actions() for _ in range(w + 1)])
    s.add("step", envs="all", actions=s.action_array(w)[:, :, :2].tolist())
    s.add("step", envs="all", encoding=F32_ENCODING, actions=pack_f32(s.action_array(w)[:, :1]))
    s.add("step", envs="all", encoding=F32_ENCODING, actions={"f32": "***", "shape": [w, s.k, 3]})
    s.add("step", envs="all", actions=pack_f32(s.action_array(w)))          # packed, encoding json
    s.add("resetDrivers", envs="all", placements=[{} for _ in range(w)],
          resultOptions={"observationScope": "reset"})
    s.add("resetDrivers", envs="all", placements={s.drivers[0]: s.placement()})
    s.add("reset", env=1, options={"seed": 5, "episode": {"maxSteps": 50}})   # config keys need envs


# The order the script sends them in (one every few steps, round after round): changing it changes the script.
REFUSALS = (
    missing_brake, unknown_type, non_finite_text, unknown_driver, duplicate_keys, wrong_type_action,
    invalid_utf8, env_out_of_range, lone_surrogates, typo_field, huge_integers, env_negative, deep_nesting,
    boolean_action, broken_json, env_boolean, envs_bad, ids, encoding_bad, seeds_bad, config_key_bad,
    extra_field, get_state_bad, reset_drivers_bad, restore_bad, not_an_object, framing_tolerance,
)
BATCHED_REFUSALS = (batched_bad,)          # a worker of more than one world also refuses these


def bad_requests(s) -> list:
    """The refusals for the script being built, ``s`` (``compliance_script._Script``): callables without
    arguments that each add their request(s) (the batched ones only when ``s`` has more than one world)."""
    refusals = REFUSALS + (BATCHED_REFUSALS if s.w > 1 else ())
    return [functools.partial(refusal, s) for refusal in refusals]
