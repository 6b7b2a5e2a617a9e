#!/usr/bin/env node
// Golden vehicle traces from PaddockJS 2.0.0, run under Node in its own environment.
//
//   node tools/paddockjs/record_traces.mjs <paddockjs-checkout> [out-dir]
//   PROFILE=physical-driver SCENARIOS=kerb-strike,runoff-gravel-grass \
//     node tools/paddockjs/record_traces.mjs <paddockjs-checkout> tests/fixtures/paddockjs-2.0.0/traces/physical-driver
//
//   TRACK_OBJECT=tests/fixtures/paddockjs-2.0.0/tracks/grand-prix.object.json \
//     node tools/paddockjs/record_traces.mjs <paddockjs-checkout> tests/fixtures/paddockjs-2.0.0/traces/grand-prix
//
// TRACK_OBJECT: race on a shipped track instead of trackSeed 2601: the file (written by
// tools/paddockjs/shipped_track_object.py) holds {shippedTrack, translationMeters, track}; its `track`
// (a PaddockJS track object) is passed as the environment's `track` option (PaddockJS's race setup
// builds it with buildTrackModel) and the scenarios use that track's placements (TRACK_PLACEMENTS).
// PROFILE=physical-driver records car-00's vector under that observation profile with every ray channel
// (road edge, kerb, illegal surface, car): its contact patches, boundaries and surface rays.
// <paddockjs-checkout> is a PaddockJS source tree at commit 28fc6c4 (v2.0.0), e.g.
//   git --git-dir=<mirror> archive 28fc6c4 | tar -x -C /tmp/paddockjs
// (its environment needs no npm install). out-dir defaults to
// tests/fixtures/paddockjs-2.0.0/traces. One JSON file per scenario and physics mode,
// <scenario>.<mode>.json.gz (gzipped JSON), with (units: metres, seconds, radians; PaddockJS's 12 u/m removed):
//   config      the createPaddockEnvironment options (trackSeed 2601, or TRACK_OBJECT's track; frameSkip 4)
//   shippedTrack, translationMeters  (TRACK_OBJECT only) the shipped track it is and its translation
//   cars        per recorded car: id, vehicle parameters, state after reset (full precision;
//               the per-step states are rounded to 1e-6)
//   actions     per env step, per car: [steering, throttle, brake] (normalised, as sent)
//   surfaces    per car, per physics tick: the four wheel surfaces the tick's dynamics read
//               (FL FR RL RR, one letter each, SURFACE_LETTERS), i.e. arcade: the car's wheel
//               states at the start of the tick; simulator: the reclassification the tick does first
//   steps       per car, per env step, the state after it: STEP_FIELDS
//   events      per car: [tick, kind] (tick 0-based over the whole run): 'contact', 'car-destroyed',
//               'drs-on' / 'drs-off' (DRS opened or closed during that tick)
//   vectors     car-00's observation vector after reset and every VECTOR_EVERY steps (default 1; env VECTOR_EVERY)
//   pitIntent, pit  (scenarios with a pit intent: pit-entry) the intent the first step's actions carry, and
//               per car and step its pit stop's [status, phase, route progress m, race distance m]
// The config of the pit scenarios also switches pit stops on (rules.modules.pitStops) and races 3 laps.
// The actions come from a scripted driver (lane keeping and a speed target, with per-scenario
// overrides); what is replayed is the recorded actions, so the driver need not be reproduced.

import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import url from 'node:url';

const STEPS = 300;
const FRAME_SKIP = 4;
const VECTOR_EVERY = Number(process.env.VECTOR_EVERY ?? 1);
const PROFILE = process.env.PROFILE ?? null; // observation profile (null: PaddockJS's default)
const U = 12; // PaddockJS sim units per metre
const TRACK_OBJECT = process.env.TRACK_OBJECT
  ? JSON.parse(fs.readFileSync(process.env.TRACK_OBJECT, 'utf8'))
  : null; // {shippedTrack, translationMeters, track}: race on that track object (null: trackSeed 2601)
const STEP_FIELDS = ['x', 'y', 'heading', 'vx', 'vy', 'speed', 'yawRate', 'steeringAngle', 'tireEnergy',
  'lateralAcceleration', 'longitudinalAcceleration', 'gripUsage', 'slipAngle', 'tractionLimited',
  'stability', 'destroyed'];
const STABILITY = ['stable', 'understeer', 'oversteer', 'spin-risk', 'destroyed'];
const SURFACE_LETTERS = {
  track: 't', kerb: 'k', gravel: 'g', grass: 's', barrier: 'b',
  'pit-entry': 'e', 'pit-lane': 'l', 'pit-exit': 'x', 'pit-box': 'p',
};
const WHEEL_ORDER = ['front-left', 'front-right', 'rear-left', 'rear-right'];

const checkout = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: record_traces.mjs <paddockjs-checkout> [out-dir]  (a PaddockJS 2.0.0 source tree)');
  process.exit(2);
}
const here = path.dirname(url.fileURLToPath(import.meta.url));
const outDir = path.resolve(process.argv[3] ?? path.join(here, '../../tests/fixtures/paddockjs-2.0.0/traces'));
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { createPaddockEnvironment } = await load('src/environment/index.js');
const { F1RaceSimulation } = await load('src/simulation/raceSimulation.js');
const { calculateWheelSurfaceState } = await load('src/simulation/vehicle/wheelSurface.js');
const { pointAt, offsetTrackPoint } = await load('src/simulation/track/spatialQueries.js');
const pkg = JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8'));

// ---- per-tick hook: the surfaces each tick's dynamics read, and its events -----------------------
let recording = null; // { ids: [...], surfaces: {id: []}, events: {id: []}, tick }
const originalStep = F1RaceSimulation.prototype.step;
F1RaceSimulation.prototype.step = function step(dt) {
  if (recording) {
    for (const id of recording.ids) {
      const car = this.cars.find((item) => item.id === id);
      const wheels = this.physicsMode === 'simulator'
        ? calculateWheelSurfaceState({ car, track: this.track }).wheels
        : car.wheelStates;
      const byId = Object.fromEntries(wheels.map((wheel) => [wheel.id, wheel.surface]));
      recording.surfaces[id].push(WHEEL_ORDER.map((wheel) => SURFACE_LETTERS[byId[wheel]] ?? '?').join(''));
    }
  }
  originalStep.call(this, dt);
  if (recording) {
    for (const event of this.events) {
      for (const id of recording.ids) {
        if ((event.type === 'contact' && (event.carId === id || event.otherCarId === id)) ||
            (event.type === 'car-destroyed' && event.carId === id)) {
          recording.events[id].push([recording.tick, event.type]);
        }
      }
    }
    for (const id of recording.ids) {
      // DRS (drag x0.42, power x1.08 in arcade): mark where PaddockJS opens and closes it (paddock_ma's
      // latch must open and close at the same steps: tests/env/test_paddockjs_closed_loop.py)
      const active = Boolean(this.cars.find((item) => item.id === id)?.drsActive);
      if (active !== (recording.drs[id] ?? false)) recording.events[id].push([recording.tick, active ? 'drs-on' : 'drs-off']);
      recording.drs[id] = active;
    }
    recording.tick += 1;
  }
};
// The environment keeps its simulation private; the last one whose snapshot was taken is the live one
// (reset builds it, places the cars and snapshots it).
let currentSim = null;
for (const method of ['snapshot', 'snapshotObservation']) {
  const original = F1RaceSimulation.prototype[method];
  F1RaceSimulation.prototype[method] = function snapshotHook(...args) {
    currentSim = this;
    return original.apply(this, args);
  };
}

// ---- the scripted driver ----------------------------------------------------------------------------
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const wrap = (a) => Math.atan2(Math.sin(a), Math.cos(a));

function laneKeep(sim, car, offsetMeters, lookMeters = 18) {
  const speed = Math.hypot(car.velocityX ?? 0, car.velocityY ?? 0) || car.speed;
  const look = Math.max(lookMeters, speed / U * 0.9) * U;
  const target = offsetTrackPoint(pointAt(sim.track, car.progress + look), offsetMeters * U);
  const bearing = wrap(Math.atan2(target.y - car.y, target.x - car.x) - car.heading);
  return clamp((bearing * 1.1 - 0.08 * (car.yawRate ?? 0)) / 0.56, -1, 1);
}

function speedTarget(sim, car, latLimit) {
  let worst = 0;
  for (let ahead = 0; ahead <= 220; ahead += 10) {
    worst = Math.max(worst, Math.abs(pointAt(sim.track, car.progress + ahead * U).curvature) * U);
  }
  return Math.min(95, Math.sqrt(latLimit / Math.max(worst, 1e-4)));
}

function drive(sim, car, { offset = 0, latLimit = 24, gain = 0.6 } = {}) {
  const v = car.speed / U;
  const err = speedTarget(sim, car, latLimit) - v;
  return [laneKeep(sim, car, offset), clamp(err * gain, 0, 1), clamp(-err * gain * 0.5, 0, 1)];
}

// ---- scenarios: placements (metres along the trackSeed 2601 lap, offset, km/h) and a policy ----------
const rampOffset = (step, from, to, start, length) => from + (to - from) * clamp((step - start) / length, 0, 1);
const SCENARIOS = {
  'straight-accel': {
    placements: { 'car-00': { distanceMeters: 7250, offsetMeters: 0, speedKph: 60 } },
    policy: (sim, car) => { const a = drive(sim, car, { latLimit: 40 }); return [a[0], Math.max(a[1], 0), a[2]]; },
  },
  'hard-braking': {
    placements: { 'car-00': { distanceMeters: 7300, offsetMeters: 2, speedKph: 300 } },
    policy: (sim, car, step) => {
      const keep = laneKeep(sim, car, 2);
      if (step < 10) return [keep, 1, 0];
      if (step < 60) return [keep, 0, 1];
      if (step < 140) return [keep, 1, 0];
      if (step < 170) return [keep, 0, 0.7];
      return drive(sim, car, { offset: 2 });
    },
  },
  'grip-limit-corner': {
    placements: { 'car-00': { distanceMeters: 1760, offsetMeters: 0, speedKph: 150 } },
    policy: (sim, car) => drive(sim, car, { latLimit: 30 }),
  },
  'lift-off-and-trail-brake': {
    placements: { 'car-00': { distanceMeters: 1760, offsetMeters: 0, speedKph: 170 } },
    policy: (sim, car, step) => {
      const keep = laneKeep(sim, car, 0);
      if (step < 40) return [keep, 1, 0];
      if (step < 70) return [keep, 0, 0];          // lift-off mid-corner
      if (step < 110) return [keep, 1, 0];
      if (step < 150) return [keep, 0, 0.5];       // trail-braking into the next bend
      return drive(sim, car, { latLimit: 30 });
    },
  },
  'kerb-strike': {
    placements: { 'car-00': { distanceMeters: 1760, offsetMeters: 0, speedKph: 140 } },
    policy: (sim, car, step) => drive(sim, car, { offset: step < 40 ? 0 : (step / 40) % 2 < 1 ? 7.7 : -7.7, latLimit: 20 }),
  },
  'runoff-gravel-grass': {
    placements: { 'car-00': { distanceMeters: 7300, offsetMeters: 0, speedKph: 110 } },
    policy: (sim, car, step) => {
      const offset = step < 150 ? rampOffset(step, 0, 30, 10, 90) : rampOffset(step, 30, 0, 150, 100);
      const a = drive(sim, car, { offset, latLimit: 20 });
      return [a[0], Math.min(a[1], 0.7), a[2]];
    },
  },
  spin: {
    placements: { 'car-00': { distanceMeters: 7300, offsetMeters: 0, speedKph: 220 } },
    policy: (sim, car, step) => {
      if (step < 10) return [laneKeep(sim, car, 0), 0.5, 0];
      if (step < 40) return [1, 1, 0.35];
      if (step < 80) return [-1, 0, 0.2];
      return [0, 0, 1];
    },
  },
  'barrier-touch': {
    placements: { 'car-00': { distanceMeters: 7300, offsetMeters: 0, speedKph: 120 } },
    policy: (sim, car, step) => [laneKeep(sim, car, step < 10 ? 0 : 60, 30), 0.6, 0],
  },
  // pit entry (trackSeed 2601: the entry connector leaves the track on the left, side -1, at 7,497 m of its
  // 8,005 m lap; the lane is beside the start straight): car-00 asks for a committed stop (pitIntent 2)
  // from the first step, drives to the stop's start (250 m before the entry), then PaddockJS's pit route
  // moves it (advancePitStopCar): approach, entry road, fast lane, queue point, service, exit.
  'pit-entry': {
    placements: { 'car-00': { distanceMeters: 7140, offsetMeters: 0, speedKph: 200 } },
    rules: { modules: { pitStops: { enabled: true } } },
    totalLaps: 3,
    pitIntent: 2,
    policy: (sim, car) => drive(sim, car, { latLimit: 24 }),
  },
  // the same stretch without a pit intent: car-00 swerves left across the pit entry's access road and
  // back; PaddockJS reads the main track's bands there (pitOverrideAllowedForCar), not the pit surfaces
  'pit-entry-cut': {
    placements: { 'car-00': { distanceMeters: 7330, offsetMeters: 0, speedKph: 140 } },
    rules: { modules: { pitStops: { enabled: true } } },
    totalLaps: 3,
    policy: (sim, car, step) => {
      const offset = step < 120 ? rampOffset(step, 0, -24, 10, 70) : rampOffset(step, -24, 0, 120, 90);
      const a = drive(sim, car, { offset, latLimit: 20 });
      return [a[0], Math.min(a[1], 0.7), a[2]];
    },
  },
  'car-contact': {
    controlled: ['car-00', 'car-01'],
    placements: {
      'car-00': { distanceMeters: 7440, offsetMeters: 0, speedKph: 200 },
      'car-01': { distanceMeters: 7456, offsetMeters: 0.6, speedKph: 100 },
    },
    policy: (sim, car, step) => {
      if (step < 40) return car.id === 'car-01' ? [0, 0.3, 0] : [0, 1, 0];
      return car.id === 'car-01' ? [laneKeep(sim, car, 3), 0.8, 0] : [laneKeep(sim, car, -2), 0.8, 0];
    },
  },
};

// ---- the same scenarios on a shipped track: each car's {distanceMeters, offsetMeters, speedKph} ---------
// grand-prix (5,180 m; 0 m is the finish line on its ~800 m start straight, 4,900-500 m): a 25 m hairpin
// at 600-700 m, sweepers (R 70-130 m) at 1,150-1,500 m, a long right-hander (R 48-130 m) at
// 2,300-2,600 m, the back straight at 2,850-3,550 m; DRS zones start at 0, 3,082 and 5,076 m; the pit
// lane (side -1) runs from 4,784 m to 408 m.
const TRACK_PLACEMENTS = {
  'grand-prix': {
    // the back straight from its start: 700 m flat out
    'straight-accel': { 'car-00': { distanceMeters: 2850, offsetMeters: 0, speedKph: 60 } },
    // the start straight at 300 km/h, braking long before the hairpin, then into it
    'hard-braking': { 'car-00': { distanceMeters: 4950, offsetMeters: 2, speedKph: 300 } },
    // the long right-hander at the lateral-acceleration target
    'grip-limit-corner': { 'car-00': { distanceMeters: 2150, offsetMeters: 0, speedKph: 150 } },
    // the sweepers: lift mid-corner, trail-brake into the next bend
    'lift-off-and-trail-brake': { 'car-00': { distanceMeters: 1100, offsetMeters: 0, speedKph: 170 } },
    // the sweepers, weaving onto the kerbs on both sides
    'kerb-strike': { 'car-00': { distanceMeters: 1100, offsetMeters: 0, speedKph: 140 } },
    // the back straight, 30 m out (gravel, then grass) and back
    'runoff-gravel-grass': { 'car-00': { distanceMeters: 2850, offsetMeters: 0, speedKph: 110 } },
    // the back straight at 220 km/h
    spin: { 'car-00': { distanceMeters: 2900, offsetMeters: 0, speedKph: 220 } },
    // the back straight, steering for 60 m out (the barrier's face is at 41 m)
    'barrier-touch': { 'car-00': { distanceMeters: 2900, offsetMeters: 0, speedKph: 120 } },
    // the fast esses after the sweepers, car-00 catching car-01 (no DRS zone starts within reach)
    'car-contact': {
      'car-00': { distanceMeters: 1700, offsetMeters: 0, speedKph: 200 },
      'car-01': { distanceMeters: 1716, offsetMeters: 0.6, speedKph: 100 },
    },
  },
  // technical (2,723 m): its only straight is the start straight, 2,520-125 m, then corners of 16-150 m
  // radius all the way round; DRS zones start at 0, 1,239 and 2,574 m; the pit lane (side -1) runs from
  // 2,336 m to 336 m.
  technical: {
    'straight-accel': { 'car-00': { distanceMeters: 2525, offsetMeters: 0, speedKph: 60 } },
    'hard-braking': { 'car-00': { distanceMeters: 2480, offsetMeters: 2, speedKph: 300 } },
    'grip-limit-corner': { 'car-00': { distanceMeters: 700, offsetMeters: 0, speedKph: 150 } },
    'lift-off-and-trail-brake': { 'car-00': { distanceMeters: 1100, offsetMeters: 0, speedKph: 170 } },
    'kerb-strike': { 'car-00': { distanceMeters: 1800, offsetMeters: 0, speedKph: 140 } },
    'runoff-gravel-grass': { 'car-00': { distanceMeters: 2525, offsetMeters: 0, speedKph: 110 } },
    spin: { 'car-00': { distanceMeters: 2530, offsetMeters: 0, speedKph: 220 } },
    'barrier-touch': { 'car-00': { distanceMeters: 2530, offsetMeters: 0, speedKph: 120 } },
    // past the line's DRS zone start, 40 steps straight on before the corners
    'car-contact': {
      'car-00': { distanceMeters: 10, offsetMeters: 0, speedKph: 200 },
      'car-01': { distanceMeters: 26, offsetMeters: 0.6, speedKph: 100 },
    },
  },
};

function numbers(values, digits) {
  // digits null: full precision (the state replays start from)
  return values.map((v) => (typeof v === 'number' && digits != null ? Number(v.toFixed(digits)) : v));
}

function carState(car, digits = [6, 6]) {
  const vx = Number.isFinite(car.velocityX) ? car.velocityX : Math.cos(car.heading) * car.speed;
  const vy = Number.isFinite(car.velocityY) ? car.velocityY : Math.sin(car.heading) * car.speed;
  return [
    ...numbers([car.x / U, car.y / U, car.heading, vx / U, vy / U, car.speed / U, car.yawRate,
      car.steeringAngle, car.tireEnergy], digits[0]),
    ...numbers([car.lateralAcceleration, car.longitudinalAcceleration, car.gripUsage, car.slipAngleRadians], digits[1]),
    car.tractionLimited ? 1 : 0,
    Math.max(0, STABILITY.indexOf(car.stabilityState)),
    car.destroyed ? 1 : 0,
  ];
}

function vectorOf(result) {
  const obs = result.observation['car-00'];
  return numbers(Array.from(obs.vector ?? obs), 6);
}

function vehicleParams(car) {
  return {
    mass: car.mass, powerNewtons: car.powerNewtons, brakeNewtons: car.brakeNewtons,
    dragCoefficient: car.dragCoefficient, downforceCoefficient: car.downforceCoefficient,
    tireGrip: car.tireGrip, tireCare: car.tireCare, tire: car.tire,
  };
}

function record(name, scenario, physicsMode) {
  const controlled = scenario.controlled ?? ['car-00'];
  const config = {
    drivers: controlled.map((id) => ({ id, name: id, tire: 'M' })),
    seed: 7,
    ...(TRACK_OBJECT ? { track: TRACK_OBJECT.track } : { trackSeed: 2601 }),
    controlledDrivers: controlled,
    physicsMode,
    frameSkip: FRAME_SKIP,
    rules: { standingStart: false, ...(scenario.rules ?? {}) },
    ...(scenario.totalLaps ? { totalLaps: scenario.totalLaps } : {}),
    scenario: {
      participants: controlled,
      placements: TRACK_OBJECT ? TRACK_PLACEMENTS[TRACK_OBJECT.shippedTrack][name] : scenario.placements,
    },
    participantInteractions: { defaultProfile: 'normal' },
    observation: { output: 'vector', includeSchema: false, ...(PROFILE ? { profile: PROFILE } : {}) },
    ...(PROFILE === 'physical-driver'
      ? { sensors: { rays: { channels: ['roadEdge', 'kerb', 'illegalSurface', 'car'] } } }
      : {}),
    result: { stateOutput: 'none' },
  };
  const env = createPaddockEnvironment(config);
  const reset = env.reset();
  const sim = currentSim;
  const carOf = (id) => sim.cars.find((item) => item.id === id);
  const out = {
    paddockjs: { package: pkg.name, version: pkg.version, commit: '28fc6c4' },
    scenario: name,
    physicsMode,
    dt: 1 / 60,
    frameSkip: FRAME_SKIP,
    config,
    ...(TRACK_OBJECT ? { shippedTrack: TRACK_OBJECT.shippedTrack, translationMeters: TRACK_OBJECT.translationMeters } : {}),
    stepFields: STEP_FIELDS,
    stabilityNames: STABILITY,
    surfaceLetters: SURFACE_LETTERS,
    wheelOrder: WHEEL_ORDER,
    cars: Object.fromEntries(controlled.map((id) => [id, { vehicle: vehicleParams(carOf(id)), reset: carState(carOf(id), [null, null]) }])),
    actions: [],
    surfaces: Object.fromEntries(controlled.map((id) => [id, []])),
    steps: Object.fromEntries(controlled.map((id) => [id, []])),
    events: Object.fromEntries(controlled.map((id) => [id, []])),
    vectors: { steps: [0], values: [vectorOf(reset)] },
    // scenarios with a pit intent: the intent the first step's actions carry (PaddockJS refuses an intent
    // once the stop is under way, so only the first step sends it), and per car and step the pit stop's
    // [status, phase, route progress (m), race distance (m)] after the step
    ...(scenario.pitIntent != null ? {
      pitIntent: scenario.pitIntent,
      pit: Object.fromEntries(controlled.map((id) => [id, []])),
    } : {}),
  };
  recording = { ids: controlled, surfaces: out.surfaces, events: out.events, drs: {}, tick: 0 };
  for (let step = 0; step < STEPS; step += 1) {
    const actions = {};
    const row = [];
    for (const id of controlled) {
      const a = scenario.policy(sim, carOf(id), step);
      const action = [clamp(a[0], -1, 1), clamp(a[1], 0, 1), clamp(a[2], 0, 1)].map((v) => Number(v.toFixed(4)));
      row.push(action);
      actions[id] = { steering: action[0], throttle: action[1], brake: action[2],
        ...(scenario.pitIntent != null && step === 0 ? { pitIntent: scenario.pitIntent } : {}) };
    }
    out.actions.push(row);
    const result = env.step(actions);
    if (currentSim !== sim) throw new Error('the environment replaced its simulation mid-run');
    for (const id of controlled) out.steps[id].push(carState(carOf(id)));
    if (out.pit) {
      for (const id of controlled) {
        const stop = carOf(id).pitStop;
        out.pit[id].push([stop?.status ?? null, stop?.phase ?? null, Number((stop?.routeProgress ?? 0) / U).toFixed(6) * 1,
          Number((carOf(id).raceDistance ?? 0) / U).toFixed(6) * 1]);
      }
    }
    if ((step + 1) % VECTOR_EVERY === 0) {
      out.vectors.steps.push(step + 1);
      out.vectors.values.push(vectorOf(result));
    }
  }
  recording = null;
  return out;
}

fs.mkdirSync(outDir, { recursive: true });
// on a shipped track, the scenarios that have placements there (the pit-entry ones are trackSeed 2601's)
const only = process.env.SCENARIOS
  ? process.env.SCENARIOS.split(',')
  : Object.keys(SCENARIOS).filter((name) => !TRACK_OBJECT || TRACK_PLACEMENTS[TRACK_OBJECT.shippedTrack]?.[name]);
for (const name of only) {
  for (const mode of ['arcade', 'simulator']) {
    const trace = record(name, SCENARIOS[name], mode);
    const file = path.join(outDir, `${name}.${mode}.json.gz`);
    fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(trace), { level: 9 }));
    console.log(file, fs.statSync(file).size);
  }
}
