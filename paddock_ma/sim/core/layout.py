"""Field indices and codes of the simulation state arrays.

The state of W worlds with C car slots each is four contiguous arrays (see ``state.py``):

* ``cars_f[W, C, NF]``  float64, per-car continuous state, SI units (m, s, rad, m/s).
* ``cars_i[W, C, NI]``  int32, per-car discrete state, flags and per-step event counters.
* ``world_f[W, NWF]``   float64, per-world continuous state.
* ``world_i[W, NWI]``   int64, per-world discrete state, including the world's RNG.

Parameters that do not change within a step live apart from the state:

* ``car_params[W, C, NP]`` float64, vehicle and driver constants per car.
* ``car_flags[W, C]``      int32 bitmask of interaction flags (``FLAG_*``).
* ``rules[W, NR]``         float64, race rules and module switches per world.

Every index is a module constant so numba folds it at compile time. Units are SI unless a
name says otherwise; km/h and degrees exist only at the environment's edges.

Frame convention (PaddockJS's): x right, y down (screen style); ``heading`` is the angle of the
forward vector ``(cos h, sin h)``; the right-hand normal is ``(-sin h, cos h)``; positive
steering, yaw rate and lateral offset all mean "toward the right".
"""

# --------------------------------------------------------------------------------------------
# Per-car float64 fields: cars_f[w, c, F_*]
# --------------------------------------------------------------------------------------------
F_X = 0                 # m, position of the body centre
F_Y = 1                 # m
F_HEADING = 2           # rad, wrapped to (-pi, pi]
F_SPEED = 3             # m/s, speed: arcade along the heading (>= 0); simulator |velocity| (PaddockJS)
F_VX = 4                # m/s, world-frame velocity (simulator mode; arcade mirrors speed*heading)
F_VY = 5                # m/s
F_YAW_RATE = 6          # rad/s, positive = turning right
F_STEER_ANGLE = 7       # rad, road-wheel angle actually reached (rate limited)
F_STEER_CMD = 8         # [-1, 1], steering target of the current controls (fraction of max angle)
F_THROTTLE_CMD = 9      # [0, 1]
F_BRAKE_CMD = 10        # [0, 1]
F_APPLIED_STEER = 11    # [-1, 1], normalised steering that drove the latest tick
F_APPLIED_THROTTLE = 12 # [0, 1]
F_APPLIED_BRAKE = 13    # [0, 1]
F_LAT_ACC = 14          # m/s^2, lateral acceleration of the latest tick (+ = right)
F_LONG_ACC = 15         # m/s^2, longitudinal acceleration of the latest tick
F_PREV_X = 16           # m, pose at the start of the latest tick
F_PREV_Y = 17           # m
F_PREV_HEADING = 18     # rad
F_PROGRESS = 19         # m, distance along the lap of the projection on the centreline, [0, L)
F_RACE_DISTANCE = 20    # m, cumulative continuous race distance (negative on the grid)
F_OFFSET = 21           # m, signed lateral offset from the centreline (+ = right)
F_HEADING_ERROR = 22    # rad, heading minus the centreline heading at F_PROGRESS, wrapped
F_CURVATURE = 23        # 1/m, signed centreline curvature at F_PROGRESS (+ = turning right)
F_TIRE_ENERGY = 24      # percent, 1..100
NO_CLOCK = -1.0          # lap / sector start of a car placed part-way round: no time until the next line
F_LAP_START_TIME = 25   # s (world time) when the current lap started; NO_CLOCK = placed mid-lap
F_LAST_LAP_TIME = 26    # s, 0 = none yet
F_BEST_LAP_TIME = 27    # s, 0 = none yet
F_SECTOR_START_TIME = 28  # s (world time) when the current sector started; NO_CLOCK = placed mid-lap
F_SECTOR1_TIME = 29     # s, last completed time of sector 1 (0 = none)
F_SECTOR2_TIME = 30     # s
F_SECTOR3_TIME = 31     # s
F_CONTACT_COOLDOWN = 32 # s, contact events are suppressed while > 0
F_PIT_SERVICE_LEFT = 33 # s, remaining service time in the box
F_PIT_PATH_S = 34       # m, distance along the pit path while the pit route drives the car
F_STALL_TIME = 35       # s, time spent stalled off legal surfaces (stalled-DNF module)
F_WHEEL_OFFSET_FL = 36  # m, signed lateral offset of each contact patch centre
F_WHEEL_OFFSET_FR = 37
F_WHEEL_OFFSET_RL = 38
F_WHEEL_OFFSET_RR = 39
F_SLIP_FRONT = 40       # rad, body slip angle of the latest tick (simulator mode; arcade 0)
F_SLIP_REAR = 41        # rad, the same (kept for the layout; no axle model since PaddockJS's)
F_FINISH_TIME = 42      # s (world time) when the car finished, 0 = not finished
F_STEP_PROGRESS = 43    # m, race distance gained during the current env step
F_STEP_LEGAL_PROGRESS = 44  # m, race distance gained on legal surfaces during the current env step
F_AI_LANE_OFFSET = 45   # m, the built-in driver's current lateral target (smoothed)
F_GRIP_USAGE = 46       # ratio, PaddockJS's grip usage of the latest tick (arcade <= 1); written by the
                        # physics step, read by nothing in it
F_WHEEL_EDGE_FL = 47    # m, each contact patch's offset as PaddockJS reports it (its wheel signedOffset):
F_WHEEL_EDGE_FR = 48    # the patch edge farthest from the centreline; the patch centre's on a pit surface;
F_WHEEL_EDGE_RL = 49    # near the pit entry and exit, that of the sampled point (centre or corner) of the
F_WHEEL_EDGE_RR = 50    # patch's worst surface (``vehicle.wheels``)
# PaddockJS's own progress and race distance (``raceProgress.js``), which its DRS latch, DRS race order and
# pit route read: the lap distance of the centreline sample nearest the car (its ``trackState.distance``,
# legacy mode; F_PROGRESS is the projection), and the race distance advanced by that progress
F_PJS_PROGRESS = 51     # m, [0, L): lap distance of the nearest centreline sample at the car's latest
                        # classification (``vehicle.wheels``); < 0: none yet (the next classification sets it)
F_PJS_PREV_PROGRESS = 52  # m, F_PJS_PROGRESS at the start of the latest tick (PaddockJS's previousProgress)
F_PJS_RACE_DISTANCE = 53  # m, PaddockJS's raceDistance: placement's race distance + its progress deltas
                          # (``vehicle.wheels``); PaddockJS's pit route sets it itself (``race.pit_route``)
F_DRS_TIME_0 = 54       # s (world time) of the car's latest crossing of DRS zone k's start, k < MAX_DRS_ZONES
F_DRS_TIME_1 = 55       # (its drsDetection[zone].time; meaningful while I_DRS_PASSAGE_k > 0)
F_DRS_TIME_2 = 56
F_DRS_TIME_3 = 57
# PaddockJS's pit route (``race.pit_route``: a policy car's stop follows PaddockJS's advancePitStopCar), so
# a stop starts at the tick PaddockJS starts it
F_PIT_ENTRY_RD = 58     # m, race distance of the pit entry the stop was scheduled at (stop.entryRaceDistance)
F_ROUTE_START_RD = 59   # m, race distance at the start of the current route (stop.routeStartRaceDistance)
F_ROUTE_END_RD = 60     # m, race distance at its end (stop.routeEndRaceDistance)
F_ROUTE_X0 = 61         # m, the car's pose when the current route was made: its first point
F_ROUTE_Y0 = 62
F_ROUTE_H0 = 63         # rad
F_ROUTE_OFFSET0 = 64    # m, the approach's start offset (the car's signed offset then; 0 on a pit surface)
NF = 65

MAX_DRS_ZONES = 4        # DRS zones a track may have (PaddockJS derives at most 3)

# Contact patches, in wheel order FL, FR, RL, RR (left = lateral -1).
WHEEL_OFFSET_FIELDS = (F_WHEEL_OFFSET_FL, F_WHEEL_OFFSET_FR, F_WHEEL_OFFSET_RL, F_WHEEL_OFFSET_RR)

# --------------------------------------------------------------------------------------------
# Per-car int32 fields: cars_i[w, c, I_*]
# --------------------------------------------------------------------------------------------
I_ACTIVE = 0            # 1 when the slot holds a participating car, 0 for an empty slot
I_DESTROYED = 1         # 1 after barrier contact, until the car is reset
I_FINISHED = 2          # 1 once race distance >= total laps * L
I_MANUAL = 3            # 1 when the controls fields come from a policy, 0 = built-in driver
I_LAP = 4               # current lap, 1-based, clamped to total laps
I_COMPLETED_LAPS = 5
I_SECTOR = 6            # 0, 1, 2: current sector
I_SURFACE = 7           # SURF_* code of the worst wheel
I_WHEEL_SURFACE_FL = 8  # SURF_* of each contact patch
I_WHEEL_SURFACE_FR = 9
I_WHEEL_SURFACE_RL = 10
I_WHEEL_SURFACE_RR = 11
I_ON_TRACK = 12         # 1 when every wheel is on track, kerb or a pit surface
I_IN_PIT_LANE = 13      # 1 when the car is on a pit surface or pit-route controlled
I_PIT_INTENT = 14       # 0 none, 1 stop if free, 2 committed
I_PIT_STATUS = 15       # PIT_* status code
I_PIT_TARGET = 16       # compound code the next stop fits (COMPOUND_*)
I_COMPOUND = 17         # compound code currently fitted
I_PIT_BOX = 18          # service box (team) index, 0..n_boxes-1
I_PIT_STOPS = 19        # stops completed
I_SEG_HINT = 20         # centreline segment index of the latest projection (search hint)
I_RANK = 21             # 1-based position among classified cars, 0 = not classified
I_GRID_LOCKED = 22      # 1 while held on the grid before the start
I_INSTABILITY = 23      # INSTAB_* label of the latest tick
I_RETIRED = 24          # 1 after a stalled-off-track retirement
I_AI_REJOIN = 25        # ticks left in the built-in driver's rejoin mode
I_EPISODE_ID = 26       # per-driver episode counter, bumped by reset_drivers
I_EPISODE_STEP = 27     # env steps since the driver's episode began
I_LIFE = 28             # life counter of the car slot (adapters' agent ids)
I_TERMINATED = 29       # 1 when the driver's episode has terminated
I_TRUNCATED = 30        # 1 when the driver's episode was truncated
I_END_REASON = 31       # END_* code
I_USED_COMPOUNDS = 32   # bitmask of compounds used (1 << COMPOUND_*)
# Event counters accumulated over the ticks of one env step (cleared at the step's start).
I_CNT_CONTACTS = 33     # car-car contact events involving this car
I_CNT_LAPS = 34         # laps completed
I_CNT_KERB_TICKS = 35   # ticks with a wheel on a kerb
I_CNT_OFFTRACK_TICKS = 36   # ticks with a wheel on an illegal surface
I_CNT_SEVERE_CUT_TICKS = 37 # ticks with every wheel beyond the kerb on one side (illegal cut)
I_CNT_SLOW_TICKS = 38   # ticks under 30 km/h
I_CNT_SPIN_TICKS = 39   # ticks with an instability label or a backwards heading error
I_CNT_PIT_ENTRY = 40    # pit-entry events
I_CNT_PIT_STOP_DONE = 41  # pit-stop-complete events
I_CNT_PIT_EXIT = 42     # pit-exit events
I_CNT_DESTROYED = 43    # barrier destruction events (0/1)
I_CONTACT_SLOTS_LO = 44  # bit j set: a contact event with car slot j (0..31) this step (int32 bits)
I_CONTACT_SLOTS_HI = 45  # bit j - 32 set: a contact event with car slot j (32..63) this step
I_LAST_CONTACT_WITH = 46  # slot index of the car of the latest contact, -1 = none
I_TRACTION_LIMITED = 47  # 1 = the latest tick's tyres were at their limit (PaddockJS tractionLimited)
# DRS (``race.drs``, PaddockJS's ``timing/drsTiming.js``)
I_DRS_ZONE = 48         # 1 + index of the DRS zone the car latched (its drsZoneId), 0 = none
I_DRS_ENABLED = 49      # 1 when the latched zone opened (drsZoneEnabled): the car ahead crossed its start
                        # on the same passage at most R_DRS_DETECTION s earlier
I_DRS_ACTIVE = 50       # 1 = DRS open (drsActive, = drsEligible): enabled and inside the latched zone
I_DRS_PASSAGE_0 = 51    # crossings of DRS zone k's start since the car was placed (drsDetection[zone].passage)
I_DRS_PASSAGE_1 = 52
I_DRS_PASSAGE_2 = 53
I_DRS_PASSAGE_3 = 54
I_PIT_ROUTE = 55        # ROUTE_*: which of PaddockJS's pit routes moves the car (0: none, or our pit service's)
I_PIT_ROUTE_CURSOR = 56  # the route's segment cursor (PaddockJS's route.segmentCursor)
NI = 57

# I_PIT_ROUTE codes: a policy car in a stop follows PaddockJS's routes (``race.pit_route``)
ROUTE_NONE = 0          # not on PaddockJS's route (no stop, or a built-in driver's stop: ``race.pit_service``)
ROUTE_ENTRY = 1         # entering: approach, entry road, fast lane to the queue point (phase 'entry')
ROUTE_RELEASE = 2       # entering: queue point into the service area at 30 km/h (phase 'queue-release')
ROUTE_HELD = 3          # queued or servicing: no route, the car stands at the queue point or in the box
ROUTE_EXIT = 4          # exiting: box to the fast lane, the lane, the exit road (phase 'exit')
ROUTE_NAMES = ("none", "entry", "queue-release", "held", "exit")

WHEEL_SURFACE_FIELDS = (I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR)
FIRST_COUNTER = I_CNT_CONTACTS
LAST_COUNTER = I_CONTACT_SLOTS_HI   # inclusive

# --------------------------------------------------------------------------------------------
# Per-world fields
# --------------------------------------------------------------------------------------------
WF_TIME = 0             # s, simulated time since reset
WF_LIGHTS_OUT_AT = 1    # s, time the start lights go out (standing start)
WF_RED_FLAG_TIME = 2    # s, time the current red flag began, -1 none
NWF = 3

WI_TICK = 0             # physics ticks since reset
WI_RNG_KEY = 1          # counter-based generator: key (derived from the world seed)
WI_RNG_COUNTER = 2      # counter-based generator: draws so far
WI_RACE_MODE = 3        # MODE_* code
WI_RED_FLAG = 4         # 1 while a red flag is out
WI_PIT_LANE_OPEN = 5    # 1 when the pit lane is open
WI_RACE_FINISHED = 6    # 1 when every classified car has finished
WI_ENV_STEP = 7         # env steps since the world's reset (info.step)
WI_SEED = 8             # the world's seed (for reporting; randomness uses key+counter)
NWI = 9

# --------------------------------------------------------------------------------------------
# Car parameters: car_params[w, c, P_*] (constant within a step)
# --------------------------------------------------------------------------------------------
P_MASS = 0              # kg
P_POWER = 1             # N, peak drive force
P_BRAKE = 2             # N, peak brake force
P_DRAG_CD = 3           # aero drag coefficient (dimensionless, scaled as in the spec)
P_DOWNFORCE_CL = 4      # downforce coefficient
P_TIRE_GRIP = 5         # peak tyre friction coefficient (mu)
P_TIRE_CARE = 6         # tyre care factor (wear divisor)
P_PACE = 7              # built-in driver pace, 1 = neutral
P_RACECRAFT = 8         # built-in driver racecraft, 0.78 = neutral
P_AGGRESSION = 9        # built-in driver aggression, 0.5 = neutral
P_PIT_CREW_SPEED = 10   # 0..1, 0.5 = neutral
P_PIT_CREW_CONSISTENCY = 11  # 0..1
P_PIT_CREW_RELIABILITY = 12  # 0..1
NP = 13

# Interaction flags: car_flags[w, c] bitmask
FLAG_COLLIDES = 1       # takes part in car-car contact (only when both cars have it)
FLAG_RAY_VISIBLE = 2    # other cars' rays can hit it
FLAG_RADAR_VISIBLE = 4  # appears in other cars' nearby-car radar
FLAG_CLASSIFIED = 8     # counted in race order and classification
FLAG_PIT_OCCUPIES = 16  # occupies pit service capacity
FLAG_CONTROLLED = 32    # driven by a policy (actions), not by the built-in driver
FLAG_MAIN_TRACK_RAYS = 64  # its road-edge rays query the main track as PaddockJS's batch-training rays do
                           # (no pit window, nearest samples: ``sim.sensing.road_edge``)

# --------------------------------------------------------------------------------------------
# Rules: rules[w, R_*] (constant within a step)
# --------------------------------------------------------------------------------------------
R_PHYSICS_MODE = 0      # PHYSICS_ARCADE or PHYSICS_SIMULATOR
R_TOTAL_LAPS = 1        # laps in the race (>= 1)
R_STANDING_START = 2    # 1 standing start (grid lock + lights), 0 rolling start
R_TIRE_DEGRADATION = 3  # 1 tyre energy wears, 0 frozen
R_PIT_STOPS = 4         # 1 pit stops enabled
R_PIT_SPEED_LIMIT = 5   # m/s, pit-lane speed limit
R_PIT_STOP_SECONDS = 6  # s, base tyre service time
R_PIT_VARIABILITY = 7   # 1 crew variability on
R_PIT_PERFECT = 8       # 1 perfect stops (no variability even when on)
R_PIT_MAX_CONCURRENT = 9  # cars allowed in active stops for intent 1
R_STALLED_DNF = 10      # 1 retire cars stalled off legal surfaces
R_STALL_SECONDS = 11    # s stalled before retirement
R_RESTITUTION = 12      # car-car restitution coefficient
R_LIGHT_COUNT = 13      # start lights
R_LIGHT_INTERVAL = 14   # s between lights
R_LIGHTS_OUT_HOLD = 15  # s after the last light before lights out
R_TIRE_REQUEST_PCT = 16 # built-in driver requests a stop below this tyre energy (intent 1)
R_TIRE_COMMIT_PCT = 17  # built-in driver commits below this tyre energy (intent 2)
R_PIT_ISSUE_CHANCE = 18 # probability scale of a slow-stop issue
R_PIT_ISSUE_MAX_DELAY = 19  # s, largest issue delay
R_PIT_MIN_GAP = 20      # m, minimum gap to an active pit car ahead for intent 1
R_DRS_DETECTION = 21    # s, PaddockJS's rules.drsDetectionSeconds: DRS opens within this of the car ahead
NR = 22

PHYSICS_ARCADE = 0
PHYSICS_SIMULATOR = 1

# --------------------------------------------------------------------------------------------
# Codes
# --------------------------------------------------------------------------------------------
SURF_TRACK = 0
SURF_KERB = 1
SURF_GRAVEL = 2
SURF_GRASS = 3
SURF_BARRIER = 4
SURF_PIT_ENTRY = 5
SURF_PIT_LANE = 6
SURF_PIT_EXIT = 7
SURF_PIT_BOX = 8
N_SURFACES = 9
SURFACE_NAMES = ("track", "kerb", "gravel", "grass", "barrier", "pit-entry", "pit-lane", "pit-exit", "pit-box")

MODE_PRE_START = 0
MODE_GREEN = 1
MODE_SAFETY_CAR = 2
MODE_RED_FLAG = 3
RACE_MODE_NAMES = ("pre-start", "green", "safety-car", "red-flag")

PIT_PENDING = 0
PIT_ENTERING = 1
PIT_QUEUED = 2
PIT_SERVICING = 3
PIT_EXITING = 4
PIT_COMPLETED = 5
PIT_STATUS_NAMES = ("pending", "entering", "queued", "servicing", "exiting", "completed")

COMPOUND_S = 0
COMPOUND_M = 1
COMPOUND_H = 2
COMPOUND_NAMES = ("S", "M", "H")

INSTAB_NONE = 0
INSTAB_SPIN_RISK = 1
INSTAB_UNDERSTEER = 2
INSTAB_OVERSTEER = 3
INSTABILITY_NAMES = (None, "spin-risk", "understeer", "oversteer")

END_NONE = 0
END_DESTROYED = 1
END_STALLED = 2
END_MAX_STEPS = 3
END_RACE_FINISH = 4
END_REASON_NAMES = (None, "destroyed", "stalled-off-track", "max-steps", "race-finish")

# Who moves a car in a tick (step.py's per-car scratch ``source``; not the race mode, WI_MODE).
CONTROL_NONE = 0        # nobody: an empty slot, a held car, or the pit route drives it
CONTROL_POLICY = 1      # the policy's latched controls (I_MANUAL)
CONTROL_BUILTIN = 2     # the built-in driver (driver.builtin)

# Columns of the step's per-car scratch ``pre`` float64[C, N_PRE]: the heading the row belongs to, its cos
# and sin (computed once per heading, shared by the stages of a tick), the tyre grip factor, and in
# simulator mode what the model and the built-in driver both derive from the velocity at the start of
# the tick (``vehicle.simulator.sim_start_state``: body slip, steering gain, engine curve, log of the
# speed ratio).
PRE_HEADING = 0
PRE_COS = 1
PRE_SIN = 2
PRE_TYRE = 3
PRE_SLIP = 4
PRE_STEER_GAIN = 5
PRE_ENGINE = 6
PRE_LOG_RATIO = 7
N_PRE = 8

# --------------------------------------------------------------------------------------------
# Fixed constants of the simulation (PaddockJS values, converted to SI)
# --------------------------------------------------------------------------------------------
DT = 1.0 / 60.0                 # s, one physics tick
CAR_LENGTH = 4.65               # m, collision body
CAR_WIDTH = 1.24                # m
WHEELBASE = 3.6                 # m
WHEEL_X = 1.8                   # m, contact patch centre, longitudinal
WHEEL_Y = 0.76                  # m, contact patch centre, lateral
PATCH_LENGTH = 0.72             # m
PATCH_WIDTH = 0.38              # m
MAX_STEER_ANGLE = 0.56          # rad, at |steering| = 1
STEER_RATE = 2.35               # rad/s, road-wheel angle rate limit
MAX_SPEED = 330.0 / 3.6         # m/s, hard cap (330 km/h)
GRAVITY = 9.80665               # m/s^2
MPS_PER_KPH = 1.0 / 3.6         # m/s per km/h: speed_kph * MPS_PER_KPH is m/s
KPH_PER_MPS = 3.6               # km/h per m/s: speed * KPH_PER_MPS is km/h
