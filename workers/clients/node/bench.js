#!/usr/bin/env node
'use strict';
/**
 * A trainer's loop in Node.js against a paddock_ma worker, timed: what a non-Python trainer gets.
 *
 *   node bench.js --worlds 64 --cars 20 --seconds 5 --lap 5000 -- <worker command...>
 *
 * The same loop as paddock_ma.bench.protocol's Python trainer: batched steps of every world with the
 * f32-base64 encoding; actions from a lane-keeping controller over each car's vector (steer against
 * the track offset and heading error, hold about 140 km/h); cars whose episode ended get one batched
 * resetDrivers at a random distance of the lap (a seeded generator), scoped to the reset cars. After 20
 * untimed steps, prints one JSON line: {"car_steps_per_s", "ms_per_step", "round_trip_ms_median", "steps"}.
 */
const { PaddockWorker, decodeF32 } = require('./paddock_client');

const SPEED = 1;
const OFFSET = 6;
const HEADING_ERROR = 7;

function parseArgs(argv) {
  const out = { worlds: 64, cars: 20, seconds: 5, lap: 5000, command: null };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') { out.command = argv.slice(i + 1); break; }
    const key = arg.replace(/^--/, '');
    if (!(key in out)) throw new Error(`unknown argument ${arg}; arguments: --worlds --cars --seconds --lap -- command`);
    out[key] = Number(argv[++i]);
  }
  if (!out.command || !out.command.length) throw new Error('give the worker command after --');
  return out;
}

function rng(seed) {                   // mulberry32: a small seeded generator
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function f32b64(array, shape) {
  return { f32: Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('base64'), shape };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const { worlds, cars } = args;
  const worker = new PaddockWorker(args.command[0], args.command.slice(1));
  const random = rng(1);
  const ids = Array.from({ length: cars }, (_, k) => `car-${String(k).padStart(2, '0')}`);
  let obs = null;                       // Float32Array [worlds * cars * d]
  let d = 0;
  const ask = async (message) => {
    const reply = await worker.request(message);
    if (!reply.ok) throw new Error(`worker refused a request: ${reply.error}`);
    return reply.result;
  };
  const resetDrivers = async (mask) => {
    const envs = [];
    const placements = [];
    for (let w = 0; w < worlds; w += 1) {
      const entry = {};
      for (let k = 0; k < cars; k += 1) {
        if (mask[w * cars + k]) entry[ids[k]] = { distanceMeters: random() * args.lap };
      }
      if (Object.keys(entry).length) { envs.push(w); placements.push(entry); }
    }
    const result = await ask({ type: 'resetDrivers', envs, placements, encoding: 'f32-base64',
                               resultOptions: { observationScope: 'reset' } });
    const vectors = decodeF32(result.observation.vectors);
    d = vectors.length / Math.max(1, mask.reduce((a, b) => a + b, 0));
    if (!obs) obs = new Float32Array(worlds * cars * d);
    let row = 0;
    envs.forEach((w, i) => {
      result.resetMask[i].forEach((reset, k) => {
        if (reset) { obs.set(vectors.subarray(row * d, (row + 1) * d), (w * cars + k) * d); row += 1; }
      });
    });
  };
  const actions = new Float32Array(worlds * cars * 3);
  const step = async () => {
    for (let i = 0; i < worlds * cars; i += 1) {
      const v = i * d;
      const speed = obs[v + SPEED] * 120;
      actions[i * 3] = Math.max(-1, Math.min(1, -0.1 * obs[v + OFFSET] - obs[v + HEADING_ERROR] * Math.PI));
      actions[i * 3 + 1] = speed < 40 ? 0.8 : 0;
      actions[i * 3 + 2] = speed > 48 ? 0.3 : 0;
    }
    const result = await ask({ type: 'step', envs: 'all', encoding: 'f32-base64',
                               actions: f32b64(actions, [worlds, cars, 3]) });
    obs = decodeF32(result.observation.vectors);
    const ended = new Uint8Array(worlds * cars);
    let any = false;
    for (let w = 0; w < worlds; w += 1) {
      for (let k = 0; k < cars; k += 1) {
        if (result.terminated[w][k] || result.truncated[w][k]) { ended[w * cars + k] = 1; any = true; }
      }
    }
    if (any) await resetDrivers(ended);
  };

  await ask({ type: 'reset', envs: 'all', options: { seed: 1 } });
  await resetDrivers(new Uint8Array(worlds * cars).fill(1));
  for (let i = 0; i < 20; i += 1) await step();
  const times = [];
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < args.seconds) {
    const t = process.hrtime.bigint();
    await step();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  await worker.close();
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ car_steps_per_s: Math.round(times.length * worlds * cars / elapsed),
                               ms_per_step: +(1e3 * elapsed / times.length).toFixed(3),
                               round_trip_ms_median: +times[Math.floor(times.length / 2)].toFixed(3),
                               steps: times.length }));
}

main().catch((err) => { console.error(err.stack || String(err)); process.exit(1); });
