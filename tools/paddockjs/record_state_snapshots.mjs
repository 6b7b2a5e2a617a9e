#!/usr/bin/env node
// Golden getState snapshots of PaddockJS 2.0.0, for comparing our snapshot's shape key for key.
//
//   node tools/paddockjs/record_state_snapshots.mjs <paddockjs-checkout> [out-dir]
//
// For each golden config (tests/fixtures/paddockjs-2.0.0/<name>.reset-and-steps.json: its `config` and
// its fixed `actions`; and DERIVED, one of them changed), it creates PaddockJS's environment (createPaddockEnvironment), resets it, and
// records getState({output}) for output `full` and `minimal` after the reset and after STEPS steps, as
// JSON.stringify gives them (what PaddockJS's worker protocol sends). An array longer than KEEP keeps
// its first KEEP elements (the 3,601 track samples alone are 0.5 MB a snapshot); `arrayLengths` maps
// each shortened array's path (`$.snapshot.track.samples`, `[]` for an array level) to its full length.
// Writes <out-dir>/<name>.json.gz (default tests/fixtures/paddockjs-2.0.0/state-snapshots/);
// tests/protocol/test_state_shape.py compares our worker's snapshots with them.

import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';
import zlib from 'node:zlib';

const checkout = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: record_state_snapshots.mjs <paddockjs-checkout> [out-dir]');
  process.exit(2);
}
const here = path.dirname(url.fileURLToPath(import.meta.url));
const fixtures = path.join(here, '../../tests/fixtures/paddockjs-2.0.0');
const outDir = path.resolve(process.argv[3] ?? path.join(fixtures, 'state-snapshots'));
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { createPaddockEnvironment } = await load('src/environment/index.js');

const CONFIGS = ['default-profile', 'batch-training', 'physical-driver', 'physical-driver-front-heavy'];
// one more, for the pit-stop keys (a car's pitStop is null unless pit stops are on): default-profile
// with pit stops enabled
const DERIVED = {
  'pit-stops': ['default-profile', (config) => ({
    ...config, rules: { ...config.rules, modules: { pitStops: { enabled: true } } },
  })],
};
const STEPS = 5;
const KEEP = 3;
const OUTPUTS = ['full', 'minimal'];

function shorten(value, where, lengths) {
  if (Array.isArray(value)) {
    const key = `${where}[]`;
    if (value.length > KEEP) lengths[where] = Math.max(lengths[where] ?? 0, value.length);
    return value.slice(0, KEEP).map((item) => shorten(item, key, lengths));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v, `${where}.${k}`, lengths)]));
  }
  return value;
}

fs.mkdirSync(outDir, { recursive: true });
for (const name of [...CONFIGS, ...Object.keys(DERIVED)]) {
  const [source, derive] = DERIVED[name] ?? [name, (config) => config];
  const golden = JSON.parse(fs.readFileSync(path.join(fixtures, `${source}.reset-and-steps.json`), 'utf8'));
  golden.config = derive(golden.config);
  const env = createPaddockEnvironment(golden.config);
  const arrayLengths = {};
  const moment = (steps) => ({
    steps,
    ...Object.fromEntries(OUTPUTS.map((output) => [output, shorten(
      JSON.parse(JSON.stringify(env.getState({ output }))), '$', arrayLengths)])),
  });
  env.reset();
  const moments = [moment(0)];
  for (let step = 0; step < STEPS; step += 1) env.step(golden.actions);
  moments.push(moment(STEPS));
  env.destroy?.();
  const doc = {
    paddockjs: '2.0.0 (Inventure71/PaddockJS v6, 28fc6c4)',
    config: golden.config,
    actions: golden.actions,
    note: `getState({output}) after reset() and after ${STEPS} step(actions); arrays cut to their first ${KEEP} `
      + 'elements, arrayLengths gives the full length of each array that was cut',
    moments,
    arrayLengths,
  };
  const file = path.join(outDir, `${name}.json.gz`);
  fs.writeFileSync(file, zlib.gzipSync(`${JSON.stringify(doc)}\n`, { level: 9 }));
  console.log(`${file}: ${fs.statSync(file).size} bytes`);
}
