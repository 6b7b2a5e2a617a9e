#!/usr/bin/env node
'use strict';
/**
 * Drive one paddock_ma worker through a short session and print every reply line to stdout.
 *
 *   node drive.js                          # python3 -m paddock_ma.cli serve --env paddock/gp-v0
 *   node drive.js --env paddock/oval-batch-v0
 *   node drive.js --requests sent.ndjson -- .venv/bin/python -m paddock_ma.cli serve --env paddock/gp-v0
 *   node drive.js --f32                    # vectors as base64 float32 (encoding "f32-base64")
 *
 * The session: hello; getActionSpec (its controlledDrivers are the drivers to act for); reset with
 * seed 7; 100 steps with fixed actions (steering cycles through -0.1..0.1, throttle 0.8, brake 0) for
 * every controlled driver; resetDrivers of the first controlled driver to 1200 m at 80 km/h (only its
 * observation back, no state); getState with the minimal state output. stdout gets each reply line
 * exactly as the worker wrote it; --requests FILE saves each request line as sent (to replay them
 * elsewhere); a one-line JSON summary, `{"summary": {...}}`, goes to stderr (with the first controlled
 * driver's last step observation vector, decoded). Exit code 0 when every reply had ok: true; 1 when a
 * reply was an error, or the worker could not start, died or did not answer a request within --timeout
 * seconds (default 300), with the reason on stderr.
 * PADDOCK_PYTHON names the Python of the default command (default python3).
 */
const fs = require('node:fs');
const { PaddockWorker, decodeF32 } = require('./paddock_client');

const STEPS = 100;

function parseArgs(argv) {
  const out = { env: 'paddock/gp-v0', requests: null, command: null, f32: false, timeout: 300 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') { out.command = argv.slice(i + 1); break; }
    if (arg === '--env') out.env = argv[++i];
    else if (arg === '--requests') out.requests = argv[++i];
    else if (arg === '--f32') out.f32 = true;
    else if (arg === '--timeout') {
      out.timeout = Number(argv[++i]);
      if (!(out.timeout > 0)) throw new Error(`--timeout takes a positive number of seconds, got ${argv[i]}`);
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)}; use --env ID, --requests FILE, --f32, `
        + '--timeout SECONDS, -- COMMAND...');
    }
  }
  if (!out.command || out.command.length === 0) {
    out.command = [process.env.PADDOCK_PYTHON || 'python3', '-m', 'paddock_ma.cli', 'serve', '--env', out.env];
  }
  return out;
}

/** The fixed action of `driver` (its index k) at step t: same numbers on every run. */
function action(t, k) {
  return { steering: (((t + 7 * k) % 21) - 10) / 100, throttle: 0.8, brake: 0 };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const worker = new PaddockWorker(args.command[0], args.command.slice(1),
                                   { requestTimeoutMs: args.timeout * 1000 });
  const sent = [];
  let nextId = 1;
  let failures = 0;

  async function send(message) {
    const line = JSON.stringify({ id: nextId++, ...message });
    sent.push(line);
    const reply = await worker.requestLine(line);
    process.stdout.write(`${reply}\n`);
    const parsed = JSON.parse(reply);
    if (!parsed.ok) failures += 1;
    return parsed;
  }

  const encoding = args.f32 ? { encoding: 'f32-base64' } : {};
  try {
    const hello = await send({ type: 'hello', protocolVersion: '1.0', client: 'drive.js' });
    const spec = await send({ type: 'getActionSpec' });
    const drivers = (spec.result && spec.result.controlledDrivers) || [];
    await send({ type: 'reset', options: { seed: 7 }, ...encoding });
    let last = null;
    for (let t = 0; t < STEPS; t += 1) {
      const actions = {};
      drivers.forEach((driver, k) => { actions[driver] = action(t, k); });
      last = await send({ type: 'step', actions, ...encoding });
    }
    const placements = {};
    if (drivers.length > 0) placements[drivers[0]] = { distanceMeters: 1200, offsetMeters: 0, speedKph: 80 };
    await send({ type: 'resetDrivers', placements,
      resultOptions: { observationScope: 'reset', stateOutput: 'none' }, ...encoding });
    await send({ type: 'getState', stateOptions: { output: 'minimal' } });
    const result = last && last.ok ? last.result : null;
    const observation = result && drivers.length > 0 ? result.observation[drivers[0]] : null;
    process.stderr.write(`${JSON.stringify({ summary: {
      protocolVersion: hello.ok ? hello.result.protocolVersion : hello.error,
      controlledDrivers: drivers,
      requests: sent.length,
      failures,
      lastStep: result ? result.info.step : null,
      lastVector: observation && observation.vector ? Array.from(decodeF32(observation.vector)) : null,
    } })}\n`);
  } finally {
    if (args.requests) fs.writeFileSync(args.requests, sent.map((line) => `${line}\n`).join(''));
    const exit = await worker.close();
    if (exit.code !== 0) failures += 1;
  }
  return failures === 0 ? 0 : 1;
}

main().then((code) => { process.exitCode = code; }, (err) => {
  process.stderr.write(`drive.js: ${err.message || err}\n`);
  process.exitCode = 1;
});
