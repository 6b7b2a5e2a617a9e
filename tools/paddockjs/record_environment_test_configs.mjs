#!/usr/bin/env node
// The configs of PaddockJS 2.0.0's worker-protocol environment tests, as JSON.
//
//   node tools/paddockjs/record_environment_test_configs.mjs <paddockjs-checkout> [out-file]
//
// PaddockJS's src/__tests__/environment.test.js (commit 28fc6c4) builds each test's
// createPaddockEnvironment options from its demo data (DEMO_PROJECT_DRIVERS,
// CHAMPIONSHIP_ENTRY_BLUEPRINTS), its default TRACK object and a helper making batch-training drivers
// and entries. This script builds the same options from the same PaddockJS modules and writes them,
// as JSON.stringify gives them (DriverData/VehicleData instances become their fields), to
// tests/fixtures/paddockjs-2.0.0/environment-test-configs.json: one object, one key per config
// (the port, tests/protocol/paddockjs_port, names them). Values the test computes from constants
// (the barrier offset from TRACK's widths) are computed here as the test does; values it reads from a
// running environment (the pit exit of the barrier-near-pit-exit test) are read by the port over the
// worker protocol, so they are not here.

import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const checkout = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: record_environment_test_configs.mjs <paddockjs-checkout> [out-file]');
  process.exit(2);
}
const here = path.dirname(url.fileURLToPath(import.meta.url));
const outFile = path.resolve(process.argv[3]
  ?? path.join(here, '../../tests/fixtures/paddockjs-2.0.0/environment-test-configs.json'));
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { DEMO_PROJECT_DRIVERS } = await load('src/data/demoDrivers.js');
const { CHAMPIONSHIP_ENTRY_BLUEPRINTS } = await load('src/data/championship.js');
const { TRACK } = await load('src/simulation/track/trackConstants.js');
const { simUnitsToMeters } = await load('src/simulation/units.js');

const ENVIRONMENT_TEST_DRIVERS = DEMO_PROJECT_DRIVERS.slice(0, 3);
const CONTROLLED_DRIVER_ID = ENVIRONMENT_TEST_DRIVERS[0].id;
const driverId = CONTROLLED_DRIVER_ID;

// environment.test.js's createBatchTrainingDrivers, as written there
function createBatchTrainingDrivers(count = 20) {
  const colors = ['#e10600', '#00a3ff', '#f1c65b', '#38bdf8', '#22c55e'];
  const drivers = Array.from({ length: count }, (_, index) => ({
    id: `agent-${index}`,
    code: `A${index}`,
    icon: `A${index}`,
    raceName: `A${index}`,
    name: `Agent ${index}`,
    color: colors[index % colors.length],
    tire: 'M',
    pace: 1,
    racecraft: 0.8,
  }));
  const entries = drivers.map((driver, index) => ({
    driverId: driver.id,
    driverNumber: 70 + index,
    timingName: driver.code,
    driver: { pace: 75, racecraft: 75, aggression: 55, riskTolerance: 55, patience: 65, consistency: 70 },
    vehicle: {
      id: `agent-car-${index}`, name: `Agent ${index}`, power: 75, braking: 70, aero: 72, dragEfficiency: 68,
      mechanicalGrip: 74, weightControl: 70, tireCare: 70,
    },
  }));
  return { drivers, entries, ids: drivers.map((driver) => driver.id) };
}

const batch = (count) => createBatchTrainingDrivers(count);
const physicalBatch = (count, extra) => {
  const b = batch(count);
  return {
    drivers: b.drivers,
    entries: b.entries,
    controlledDrivers: b.ids,
    seed: 71,
    track: TRACK,
    physicsMode: 'simulator',
    participantInteractions: { defaultProfile: 'batch-training' },
    scenario: { participants: b.ids },
    ...extra,
  };
};
const demo = (extra) => ({
  drivers: ENVIRONMENT_TEST_DRIVERS,
  entries: CHAMPIONSHIP_ENTRY_BLUEPRINTS,
  controlledDrivers: [driverId],
  ...extra,
});
const noSensors = { rays: { enabled: false }, nearbyCars: { enabled: false } };
const barrierOffsetMeters = simUnitsToMeters(
  TRACK.width / 2 + (TRACK.kerbWidth ?? 0) + TRACK.gravelWidth + TRACK.runoffWidth,
) + 6;

const configs = {
  'tire-degradation-disabled': demo({
    seed: 71, trackSeed: 2097, frameSkip: 4, scenario: { participants: 'controlled-only' },
    rules: { standingStart: false, modules: { tireDegradation: { enabled: false } } },
    episode: { maxSteps: 10 },
  }),
  'no-pit-training-profile': demo({
    seed: 71, trackSeed: 4101, trackGeneration: { profile: 'training-short' }, frameSkip: 2,
    scenario: { participants: 'controlled-only' },
    sensors: { rays: { enabled: true, layout: 'driver-front-heavy', channels: ['roadEdge', 'kerb', 'illegalSurface', 'car'] } },
    rules: { standingStart: false, modules: { pitStops: { enabled: false }, tireDegradation: { enabled: false } } },
    result: { stateOutput: 'full' },
    episode: { maxSteps: 20, endOnRaceFinish: false },
  }),
  'zero-steering-recenters': demo({
    seed: 71, trackSeed: 2097, frameSkip: 1, physicsMode: 'simulator', scenario: { participants: 'controlled-only' },
    rules: { standingStart: false, modules: { tireDegradation: { enabled: false } } },
    episode: { maxSteps: 30 },
  }),
  // the test's baseline; the placed env's config is this plus physicsMode and a placement read from
  // the baseline's state (the port builds it)
  'barrier-near-pit-exit': demo({
    seed: 71, trackSeed: 2097, rules: { standingStart: false, ruleset: 'fia2025' },
    scenario: { participants: 'controlled-only' },
  }),
  'batch-multi-car': physicalBatch(4, {
    frameSkip: 2,
    observation: { profile: 'physical-driver', output: 'full', includeSchema: true },
    result: { stateOutput: 'full' },
    sensors: {
      rays: { enabled: true, layout: 'driver-front-heavy', channels: ['roadEdge', 'kerb', 'illegalSurface', 'car'] },
      nearbyCars: { enabled: false },
    },
    rules: { standingStart: false, modules: { pitStops: { enabled: false }, tireDegradation: { enabled: false } } },
  }),
  'reset-step-shapes': demo({
    seed: 71, track: TRACK, rules: { standingStart: false, ruleset: 'fia2025' },
    sensors: {
      rays: { enabled: true, anglesDegrees: [-30, 0, 30], lengthMeters: 80 },
      nearbyCars: { enabled: true, maxCars: 2, radiusMeters: 100 },
    },
  }),
  'physical-driver-opt-in': demo({
    seed: 71, track: TRACK, observation: { profile: 'physical-driver' },
    sensors: {
      rays: {
        enabled: true,
        rays: [{ id: 'front', angleDegrees: 0, lengthMeters: 220 }, { id: 'right', angleDegrees: 90, lengthMeters: 80 }],
        channels: ['roadEdge', 'kerb', 'illegalSurface', 'barrier', 'car'],
      },
      nearbyCars: { enabled: true, maxCars: 2, radiusMeters: 100 },
    },
  }),
  'compact-vector-only': demo({
    seed: 71, track: TRACK, observation: { profile: 'physical-driver', output: 'vector', includeSchema: false },
    sensors: { rays: { enabled: true, anglesDegrees: [0], lengthMeters: 80 }, nearbyCars: { enabled: false } },
  }),
  'typed-vector-lean-state': demo({
    seed: 71, track: TRACK,
    observation: { profile: 'physical-driver', output: 'vector', includeSchema: false, vectorType: 'float32' },
    result: { stateOutput: 'none' },
    sensors: noSensors,
  }),
  'reset-drivers-selected': physicalBatch(3, {
    observation: { profile: 'physical-driver' }, sensors: noSensors, rules: { standingStart: false },
  }),
  'reset-drivers-clears-truncation': physicalBatch(2, {
    episode: { maxSteps: 1, endOnRaceFinish: false }, sensors: noSensors, rules: { standingStart: false },
  }),
  'reset-drivers-lean': physicalBatch(3, {
    observation: { profile: 'physical-driver', output: 'vector', includeSchema: false },
    result: { stateOutput: 'minimal', resetDriversObservationScope: 'reset' },
    sensors: noSensors, rules: { standingStart: false },
  }),
  'reset-options-preserve': demo({
    seed: 71, track: TRACK, rules: { standingStart: false, modules: { tireDegradation: { enabled: false } } },
    sensors: { rays: { enabled: false }, nearbyCars: { enabled: true, maxCars: 2, radiusMeters: 50 } },
  }),
  'reset-options-clear-placements': demo({
    seed: 71, track: TRACK, rules: { standingStart: false },
    scenario: {
      participants: 'controlled-only',
      placements: { [driverId]: { distanceMeters: 1200, offsetMeters: 0, speedKph: 80 } },
    },
    sensors: noSensors,
  }),
  'per-driver-runtime-metrics': (() => {
    const b = batch(2);
    return physicalBatch(2, {
      scenario: {
        participants: b.ids,
        placements: {
          [b.ids[0]]: { distanceMeters: 800, offsetMeters: 0, speedKph: 80 },
          [b.ids[1]]: { distanceMeters: 800, offsetMeters: 14, speedKph: 20, headingErrorRadians: 1.6 },
        },
      },
      observation: { profile: 'physical-driver' }, sensors: noSensors, rules: { standingStart: false },
    });
  })(),
  'batch-full-finite': physicalBatch(2, {
    observation: { profile: 'physical-driver', output: 'full', includeSchema: true },
    sensors: noSensors, rules: { standingStart: false },
  }),
  'barrier-destruction-reset-drivers': {
    drivers: ENVIRONMENT_TEST_DRIVERS.slice(0, 2),
    entries: CHAMPIONSHIP_ENTRY_BLUEPRINTS,
    controlledDrivers: [driverId],
    track: TRACK,
    physicsMode: 'simulator',
    frameSkip: 1,
    rules: { standingStart: false },
    scenario: {
      placements: {
        [driverId]: {
          distanceMeters: 720, offsetMeters: barrierOffsetMeters, speedKph: 180, headingErrorRadians: Math.PI / 2,
        },
      },
    },
  },
  'lookahead-sanitize': demo({
    seed: 71, track: TRACK, observation: { lookaheadMeters: '100' }, sensors: noSensors,
  }),
  'scenario-placement-traffic': demo({
    seed: 71, track: TRACK, rules: { standingStart: false },
    scenario: {
      preset: 'off-track-recovery',
      placements: { [driverId]: { distanceMeters: 420, offsetMeters: 16, speedKph: 65, headingErrorRadians: 0.4 } },
      traffic: [{
        driverId: ENVIRONMENT_TEST_DRIVERS[1].id, relativeTo: driverId, deltaDistanceMeters: 24, offsetMeters: -1.5, speedKph: 68,
      }],
    },
    sensors: { rays: { enabled: false }, nearbyCars: { enabled: true, maxCars: 2, radiusMeters: 80 } },
  }),
  'indexed-queries-default': {
    drivers: ENVIRONMENT_TEST_DRIVERS.slice(0, 2),
    entries: CHAMPIONSHIP_ENTRY_BLUEPRINTS,
    controlledDrivers: [ENVIRONMENT_TEST_DRIVERS[0].id],
    seed: 71,
    track: TRACK,
    rules: { standingStart: false },
  },
  'gym-style-step': demo({ seed: 71, trackSeed: 2026, track: TRACK, totalLaps: 2, frameSkip: 2 }),
  'pit-request-by-action': demo({
    seed: 71, track: TRACK, totalLaps: 4, frameSkip: 1,
    rules: { standingStart: false, modules: { pitStops: { enabled: true }, tireStrategy: { enabled: true } } },
    sensors: noSensors,
  }),
  'unavailable-pit-intent': demo({
    actionPolicy: 'report', seed: 71, track: TRACK, totalLaps: 4, frameSkip: 1,
    rules: { standingStart: false, modules: { pitStops: { enabled: false } } },
    sensors: noSensors,
  }),
  'no-op-pit-intent': demo({ seed: 71, track: TRACK, totalLaps: 4, frameSkip: 1, sensors: noSensors }),
  'applied-controls': demo({
    actionPolicy: 'report', seed: 71, track: TRACK, totalLaps: 4, frameSkip: 1, physicsMode: 'simulator',
    observation: { profile: 'physical-driver' }, rules: { standingStart: false }, sensors: noSensors,
  }),
  'report-mode-release': demo({
    actionPolicy: 'report', seed: 71, track: TRACK, totalLaps: 4, frameSkip: 1, physicsMode: 'simulator',
    observation: { profile: 'physical-driver' }, rules: { standingStart: false }, sensors: noSensors,
  }),
  'action-observation-specs': demo({
    seed: 71, trackSeed: 2026, track: TRACK, frameSkip: 4,
    sensors: {
      rays: { enabled: true, anglesDegrees: [-90, 0, 90], lengthMeters: 80 },
      nearbyCars: { enabled: true, maxCars: 4, radiusMeters: 120 },
    },
  }),
  'worker-protocol-wrapper': demo({ seed: 71, track: TRACK, rules: { standingStart: false } }),
  'worker-get-state-options': demo({ seed: 71, track: TRACK, rules: { standingStart: false } }),
};

const text = `${JSON.stringify(configs, null, 1)}\n`;
fs.writeFileSync(outFile, text);
console.log(`wrote ${Object.keys(configs).length} configs to ${path.relative(process.cwd(), outFile)}`);
