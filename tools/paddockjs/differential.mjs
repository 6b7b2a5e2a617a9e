#!/usr/bin/env node
// The Node half of the differential tester (tools/paddockjs/differential.py): runs scenarios in
// PaddockJS 2.0.0's own environment and answers, per scenario, what PaddockJS did.
//
//   node tools/paddockjs/differential.mjs <paddockjs-checkout>
//
// stdin: one JSON scenario a line; stdout: one JSON answer a line (the same order). A scenario:
//   {id, config, steps, actions?, controller?, pit?, resets?}
//     config      createPaddockEnvironment options (the tester draws them)
//     steps       env steps to run
//     actions     per step, per controlled driver (config order): [steering, throttle, brake], sent as is
//     controller  instead of actions: {offset, latLimit, gain, weave} per controlled driver: a lane-keeping
//                 driver with a speed target that reads PaddockJS's own state (what it sent is recorded)
//     pit         per step: {driver: {pitIntent, pitCompound?}} merged into that step's actions
//     resets      [{step, placements}]: resetDrivers(placements) before that step's actions
// The answer: {id, ok, error?, cars (participant ids), controlled, actions (as sent, per step),
//   fields (the per-car state names), reset (the state per car after reset), steps (per step, per car:
//   the state after it), vectors (per controlled driver: after reset, then after each step; null where
//   PaddockJS's result has none), episodes (per step, per controlled driver: [terminated, truncated,
//   endReason]), events (per step: [[tick-in-step, type, carId, otherCarId]]), resetResults (per reset:
//   {step, vectors})}. Units: metres, seconds, radians (PaddockJS's 12 u/m removed).

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import url from 'node:url';

const U = 12;
const checkout = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: differential.mjs <paddockjs-checkout>  (a PaddockJS 2.0.0 source tree)');
  process.exit(2);
}
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { createPaddockEnvironment } = await load('src/environment/index.js');
const { F1RaceSimulation } = await load('src/simulation/raceSimulation.js');
const { pointAt, offsetTrackPoint } = await load('src/simulation/track/spatialQueries.js');

// The environment keeps its simulation private: the last one that took a snapshot is the live one.
let currentSim = null;
for (const method of ['snapshot', 'snapshotObservation', 'snapshotTraining']) {
  const original = F1RaceSimulation.prototype[method];
  F1RaceSimulation.prototype[method] = function snapshotHook(...args) {
    currentSim = this;
    return original.apply(this, args);
  };
}
// every tick's events (a step's result carries only the environment's view of them)
let tickEvents = null;
const originalStep = F1RaceSimulation.prototype.step;
F1RaceSimulation.prototype.step = function step(dt) {
  originalStep.call(this, dt);
  if (tickEvents) {
    for (const e of this.events) {
      if (e.type === 'contact' || e.type === 'car-destroyed') tickEvents.list.push([tickEvents.tick, e.type, e.carId ?? null, e.otherCarId ?? null]);
    }
    tickEvents.tick += 1;
  }
};

const FIELDS = ['x', 'y', 'heading', 'vx', 'vy', 'speed', 'yawRate', 'steeringAngle', 'lateralAcceleration',
  'longitudinalAcceleration', 'gripUsage', 'slipAngle', 'tireEnergy', 'raceDistance', 'lap', 'rank',
  'destroyed', 'finished', 'pitStatus', 'wheels', 'drsActive', 'stability', 'compound'];
const SURFACE_LETTERS = { track: 't', kerb: 'k', gravel: 'g', grass: 's', barrier: 'b',
  'pit-entry': 'e', 'pit-lane': 'l', 'pit-exit': 'x', 'pit-box': 'p' };
const WHEEL_ORDER = ['front-left', 'front-right', 'rear-left', 'rear-right'];

function carState(car) {
  const vx = Number.isFinite(car.velocityX) ? car.velocityX : Math.cos(car.heading) * car.speed;
  const vy = Number.isFinite(car.velocityY) ? car.velocityY : Math.sin(car.heading) * car.speed;
  const wheels = Object.fromEntries((car.wheelStates ?? []).map((w) => [w.id, w.surface]));
  return [car.x / U, car.y / U, car.heading, vx / U, vy / U, car.speed / U, car.yawRate ?? 0, car.steeringAngle ?? 0,
    car.lateralAcceleration ?? 0, car.longitudinalAcceleration ?? 0, car.gripUsage ?? 0, car.slipAngleRadians ?? 0,
    car.tireEnergy ?? null, (car.raceDistance ?? 0) / U, car.lap ?? null, car.rank ?? null, car.destroyed ? 1 : 0,
    car.finished ? 1 : 0, car.pitStop?.status ?? null,
    WHEEL_ORDER.map((id) => SURFACE_LETTERS[wheels[id]] ?? '?').join(''), car.drsActive ? 1 : 0,
    car.stabilityState ?? null, car.tire ?? null];
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const wrap = (a) => Math.atan2(Math.sin(a), Math.cos(a));

// a lane-keeping driver with a speed target from the curvature ahead (it reads PaddockJS's state; the
// tester replays what it sent, so it need not be reproduced)
function drive(sim, car, step, { offset = 0, latLimit = 24, gain = 0.6, weave = 0 }) {
  const speed = Math.hypot(car.velocityX ?? 0, car.velocityY ?? 0) || car.speed;
  const lane = offset + (weave ? weave * Math.sin(step / 17) : 0);
  const look = Math.max(18, speed / U * 0.9) * U;
  const target = offsetTrackPoint(pointAt(sim.track, car.progress + look), lane * U);
  const bearing = wrap(Math.atan2(target.y - car.y, target.x - car.x) - car.heading);
  const steer = clamp((bearing * 1.1 - 0.08 * (car.yawRate ?? 0)) / 0.56, -1, 1);
  let worst = 0;
  for (let ahead = 0; ahead <= 220; ahead += 10) {
    worst = Math.max(worst, Math.abs(pointAt(sim.track, car.progress + ahead * U).curvature) * U);
  }
  const err = Math.min(95, Math.sqrt(latLimit / Math.max(worst, 1e-4))) - car.speed / U;
  return [steer, clamp(err * gain, 0, 1), clamp(-err * gain * 0.5, 0, 1)];
}

const vectorOf = (obs) => (obs?.vector == null ? null : Array.from(obs.vector));

function run(scenario) {
  const env = createPaddockEnvironment(scenario.config);
  const reset = env.reset();
  const sim = currentSim;
  const ids = sim.cars.map((car) => car.id);
  const controlled = [...new Set(scenario.config.controlledDrivers)];
  const carOf = (id) => sim.cars.find((car) => car.id === id);
  const out = {
    id: scenario.id, ok: true, cars: ids, controlled, fields: FIELDS,
    reset: ids.map((id) => carState(carOf(id))),
    actions: [], steps: [], episodes: [], events: [], resetResults: [],
    vectors: Object.fromEntries(controlled.map((id) => [id, [vectorOf(reset.observation[id])]])),
  };
  const resets = new Map((scenario.resets ?? []).map((r) => [r.step, r.placements]));
  for (let step = 0; step < scenario.steps; step += 1) {
    if (resets.has(step)) {
      const r = env.resetDrivers(resets.get(step));
      out.resetResults.push({ step, vectors: Object.fromEntries(Object.entries(r.observation).map(([id, o]) => [id, vectorOf(o)])) });
    }
    const actions = {};
    const row = controlled.map((id, k) => {
      const a = scenario.controller
        ? drive(sim, carOf(id), step, scenario.controller[k])
        : scenario.actions[step][k];
      const sent = a.map((v) => Number(Number(v).toFixed(6)));
      actions[id] = { steering: sent[0], throttle: sent[1], brake: sent[2], ...(scenario.pit?.[step]?.[id] ?? {}) };
      return sent;
    });
    out.actions.push(row);
    tickEvents = { tick: 0, list: [] };
    const result = env.step(actions);
    out.events.push(tickEvents.list);
    tickEvents = null;
    if (currentSim !== sim) throw new Error('the environment replaced its simulation mid-run');
    out.steps.push(ids.map((id) => carState(carOf(id))));
    out.episodes.push(controlled.map((id) => {
      const d = result.info.drivers[id];
      return [d.terminated ? 1 : 0, d.truncated ? 1 : 0, d.endReason ?? null];
    }));
    for (const id of controlled) out.vectors[id].push(vectorOf(result.observation[id]));
  }
  return out;
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let scenario = null;
  let answer;
  try {
    scenario = JSON.parse(line);
    answer = run(scenario);
  } catch (error) {
    answer = { id: scenario?.id ?? null, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
