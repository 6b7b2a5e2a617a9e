#!/usr/bin/env node
// How PaddockJS 2.0.0 resolves a config's drivers and entries into its grid, as JSON.
//
//   node tools/paddockjs/record_resolved_drivers.mjs <paddockjs-checkout>
//
// Writes two files from PaddockJS's own modules:
// * paddock_ma/paddockjs/demo_blueprints.json: PaddockJS's CHAMPIONSHIP_ENTRY_BLUEPRINTS (src/data/
//   championship.js), the entries every driver with a demo id gets when the config's entries do not
//   name it (buildChampionshipDriverGrid merges the blueprint under the config's entry);
// * tests/fixtures/paddockjs-2.0.0/resolved-drivers.json: for each config of
//   environment-test-configs.json and of the golden reset-and-steps runs, each car of
//   createPaddockEnvironment(config).getState({output: 'full'}) after reset(): its id, display fields,
//   number, team, personality and setup (the resolved driver), as JSON.stringify gives them.

import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const checkout = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: record_resolved_drivers.mjs <paddockjs-checkout>');
  process.exit(2);
}
const here = path.dirname(url.fileURLToPath(import.meta.url));
const root = path.join(here, '../..');
const fixtures = path.join(root, 'tests/fixtures/paddockjs-2.0.0');
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { createPaddockEnvironment } = await load('src/environment/index.js');
const { CHAMPIONSHIP_ENTRY_BLUEPRINTS } = await load('src/data/championship.js');

fs.writeFileSync(path.join(root, 'paddock_ma/paddockjs/demo_blueprints.json'),
  `${JSON.stringify({ source: 'PaddockJS 2.0.0 (28fc6c4) src/data/championship.js CHAMPIONSHIP_ENTRY_BLUEPRINTS',
    entries: JSON.parse(JSON.stringify(CHAMPIONSHIP_ENTRY_BLUEPRINTS)) }, null, 1)}\n`);

const KEYS = ['id', 'code', 'timingCode', 'driverNumber', 'icon', 'raceName', 'name', 'color', 'team', 'tire',
  'personality', 'aggression', 'setup'];
const configs = JSON.parse(fs.readFileSync(path.join(fixtures, 'environment-test-configs.json'), 'utf8'));
for (const name of ['default-profile', 'batch-training', 'physical-driver', 'physical-driver-front-heavy']) {
  configs[`golden:${name}`] = JSON.parse(fs.readFileSync(path.join(fixtures, `${name}.reset-and-steps.json`),
    'utf8')).config;
}
const out = {};
for (const [name, config] of Object.entries(configs)) {
  try {
    const env = createPaddockEnvironment(config);
    env.reset();
    const cars = JSON.parse(JSON.stringify(env.getState({ output: 'full' }).snapshot.cars));
    out[name] = cars.map((car) => Object.fromEntries(KEYS.map((key) => [key, car[key] ?? null])));
    env.destroy?.();
  } catch (error) {
    out[name] = { error: String(error?.message ?? error) };
  }
}
fs.writeFileSync(path.join(fixtures, 'resolved-drivers.json'), `${JSON.stringify({
  paddockjs: '2.0.0 (Inventure71/PaddockJS v6, 28fc6c4)',
  note: 'each config\'s cars after reset(), getState full: the resolved drivers (keys: ' + KEYS.join(', ') + ')',
  configs: out,
})}\n`);
console.log(Object.keys(out).length, 'configs');
