// Runs PaddockJS's own checkpoint controller (local-preview/src/policyRunner/checkpointPolicy.js) on an
// exported paddockjs-distilled-actor-v1 file and a recorded observation sequence, and prints its actions.
// A maintainer tool: PaddockJS's code is not part of this repository, so it needs a PaddockJS checkout.
//
//   node tools/paddockjs/run_checkpoint_policy.mjs <paddockjs-checkout> <actor.json> <steps.json> > actions.json
//
// steps.json: {"steps": [{"reset": [driverId, ...] | null, "observations": {driverId: {vector, object}}}]}
// (a step's "reset" lists the drivers whose policy state restarts before it, as the Policy Runner's
// reset does). Output: {"actions": [{driverId: {steering, throttle, brake}}, ...]} per step.
// tests/paddockjs/fixtures/ keeps one such output, made by tools/paddockjs/make_checkpoint_fixture.py.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [checkout, actorPath, stepsPath] = process.argv.slice(2);
if (!checkout || !actorPath || !stepsPath) {
  console.error('usage: run_checkpoint_policy.mjs <paddockjs-checkout> <actor.json> <steps.json>');
  process.exit(2);
}
const moduleUrl = pathToFileURL(resolve(checkout, 'local-preview/src/policyRunner/checkpointPolicy.js'));
const { createCheckpointPolicy } = await import(moduleUrl.href);
const payload = JSON.parse(readFileSync(actorPath, 'utf8'));
const { steps } = JSON.parse(readFileSync(stepsPath, 'utf8'));
const policy = createCheckpointPolicy(payload);
const actions = steps.map((step) => {
  // PaddockJS's actor policy clears every driver's state on any reset (resetState ignores its argument)
  if (step.reset) policy.resetState(step.reset);
  return Object.fromEntries(Object.entries(step.observations)
    .map(([driverId, observation]) => [driverId, policy.predict(observation, driverId)]));
});
process.stdout.write(JSON.stringify({ actions }));
