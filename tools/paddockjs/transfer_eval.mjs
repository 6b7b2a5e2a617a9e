// Drives an exported paddockjs-distilled-actor-v1 file in PaddockJS 2.0.0 itself: its own environment
// (createPaddockEnvironment) and its own checkpoint controller (local-preview/src/policyRunner/
// checkpointPolicy.js, createCheckpointPolicy), on a plan of rounds written by transfer_eval.py, and
// prints what each controlled driver did in each round. A maintainer tool: it needs a PaddockJS checkout
// (commit 28fc6c4; no npm install needed for these two modules).
//
//   node tools/paddockjs/transfer_eval.mjs <paddockjs-checkout> <actor.json> <plan.json> > paddockjs.json
//
// plan.json: {"config": <PaddockJS environment options>, "steps": L,
//             "rounds": [{"seed": S, "placements": {driverId: {distanceMeters, offsetMeters, speedKph}}}]}
// Each round builds the environment with the round's seed and scenario placements, resets it and the
// policy's state, then steps it L times with the policy's action for every controlled driver (PaddockJS
// asks for one per driver, ended or not). A driver's life is its steps up to and including the first one
// whose metrics say destroyed, or whose episode info says it ended.
// Output: {"rounds": [{driverId: {steps, legalMeters, crashed}}]} (legalMeters: the sum of
// metrics.legalProgressDeltaMeters over the life).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [checkout, actorPath, planPath] = process.argv.slice(2);
if (!checkout || !actorPath || !planPath) {
  console.error('usage: transfer_eval.mjs <paddockjs-checkout> <actor.json> <plan.json>');
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(resolve(checkout, rel)).href);
const { createPaddockEnvironment } = await load('src/environment/index.js');
const { createCheckpointPolicy } = await load('local-preview/src/policyRunner/checkpointPolicy.js');
const payload = JSON.parse(readFileSync(actorPath, 'utf8'));
const plan = JSON.parse(readFileSync(planPath, 'utf8'));
const policy = createCheckpointPolicy({ ...payload, format: 'paddockjs-distilled-actor-v1' });
const drivers = plan.config.controlledDrivers;

const rounds = plan.rounds.map((round) => {
  const env = createPaddockEnvironment({
    ...plan.config,
    seed: round.seed,
    scenario: { participants: drivers, placements: round.placements },
    // the checkpoint policy reads speedKph and trackOffsetMeters from the observation object
    observation: { ...plan.config.observation, output: 'full', includeSchema: false },
    result: { stateOutput: 'none' },
  });
  let result = env.reset();
  policy.resetState();
  const lives = Object.fromEntries(drivers.map((id) => [id, { steps: 0, legalMeters: 0, crashed: false, alive: true }]));
  for (let step = 0; step < plan.steps; step += 1) {
    const actions = Object.fromEntries(drivers.map((id) => [id, policy.predict(result.observation[id], id)]));
    result = env.step(actions);
    for (const id of drivers) {
      const life = lives[id];
      if (!life.alive) continue;
      const metrics = result.metrics[id];
      life.steps += 1;
      life.legalMeters += metrics.legalProgressDeltaMeters;
      const info = result.info.drivers?.[id];
      if (metrics.destroyed) life.crashed = true;
      if (metrics.destroyed || info?.terminated || info?.truncated) life.alive = false;
    }
    if (drivers.every((id) => !lives[id].alive)) break;
  }
  env.destroy?.();
  return Object.fromEntries(drivers.map((id) => {
    const { steps, legalMeters, crashed } = lives[id];
    return [id, { steps, legalMeters, crashed }];
  }));
});
process.stdout.write(JSON.stringify({ paddockjs: '2.0.0 (28fc6c4)', rounds }));
