#!/usr/bin/env node
// Records PaddockJS's procedural tracks (centreline samples and pit lane) as test fixtures.
//
//   node tools/paddockjs/record_tracks.mjs <paddockjs-checkout> <out-dir> [seed ...]
//   TRACK_GENERATION='{"profile":"training-short"}' node tools/paddockjs/record_tracks.mjs ...
//
// TRACK_GENERATION (optional): the environment's `trackGeneration` object (JSON); the files are then
// named <profile>-seed-<seed>.json and record it as `trackGeneration` (a training profile's track has no
// pit lane: `pitLane` is null).
// <paddockjs-checkout>: a PaddockJS source tree (2.0.0 is commit 28fc6c4 of Inventure71/PaddockJS),
// e.g. `git --git-dir=<mirror> archive 28fc6c4 | tar -x -C /tmp/paddockjs`; the track modules need
// no npm install. Writes <out-dir>/seed-<seed>.json per seed: the track PaddockJS builds for
// `trackSeed: <seed>` (createProceduralTrack, then buildTrackModel, as its race setup does), in
// metres (PaddockJS works in sim units, 12 per metre), in PaddockJS's frame (x right, y down).
// Coordinates are rounded to 0.1 mm to keep the files small.
//
//   node tools/paddockjs/record_tracks.mjs <paddockjs-checkout> <out-dir> --object <file.object.json> ...
//
// --object: record instead the track PaddockJS builds from a track object passed as the environment's
// `track` option (buildTrackModel, as its race setup does), e.g. a shipped track written by
// tools/paddockjs/shipped_track_object.py ({shippedTrack, translationMeters, track}); the file is named
// <out-dir>/<shippedTrack>.json and records `object: <file name>` in place of the seeds.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const DEFAULT_SEEDS = [2026, 20260430, 10101, 2701, 2097, 4101, 2601, 2602, 20, 2, 1971, 123456];
const SIM_UNITS_PER_METER = 12;

const [checkout, outDir, ...seedArgs] = process.argv.slice(2);
if (!checkout || !outDir) {
  console.error('usage: record_tracks.mjs <paddockjs-checkout> <out-dir> [seed ...]');
  process.exit(2);
}
const root = resolve(checkout);
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const { buildTrackModel, createProceduralTrack } = await import(
  pathToFileURL(join(root, 'src/simulation/track/trackModel.js')).href);

const metres = (value) => Math.round((value / SIM_UNITS_PER_METER) * 1e4) / 1e4;
const point = (p) => [metres(p.x), metres(p.y)];

function pitLaneRecord(pit) {
  if (!pit) return null;
  const end = (part) => ({
    trackDistance: metres(part.trackDistance),
    distanceFromStart: metres(part.distanceFromStart),
    trackConnectPoint: point(part.trackConnectPoint),
    lanePoint: point(part.lanePoint),
    roadCenterline: part.roadCenterline.map(point),
  });
  return {
    side: pit.side,
    offset: metres(pit.offset),
    width: metres(pit.width),
    entry: end(pit.entry),
    exit: end(pit.exit),
    mainLane: { start: point(pit.mainLane.start), end: point(pit.mainLane.end) },
    workingLane: { start: point(pit.workingLane.start), end: point(pit.workingLane.end),
      offset: metres(pit.workingLane.offset) },
    serviceNormal: [pit.serviceNormal.x, pit.serviceNormal.y],
    boxes: pit.boxes.map((box) => point(box.center)),
    serviceAreas: pit.serviceAreas.map((area) => point(area.center)),
  };
}

mkdirSync(outDir, { recursive: true });
if (seedArgs[0] === '--object') {
  for (const file of seedArgs.slice(1)) {
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    const model = buildTrackModel(doc.track);
    const record = {
      paddockjs: version,
      object: file.split('/').pop(),
      shippedTrack: doc.shippedTrack,
      translationMeters: doc.translationMeters,
      name: model.name,
      length: metres(model.length),
      sampleCount: model.samples.length - 1,
      centerline: model.samples.map(point),
      drsZones: model.drsZones.map(({ id, startRatio, endRatio }) => ({ id, startRatio, endRatio })),
      pitLane: pitLaneRecord(model.pitLane),
    };
    writeFileSync(join(outDir, `${doc.shippedTrack}.json`), `${JSON.stringify(record)}\n`);
    console.log(`${doc.shippedTrack}: ${record.length} m, pit side ${record.pitLane?.side}`);
  }
  process.exit(0);
}
const seeds = seedArgs.length ? seedArgs.map(Number) : DEFAULT_SEEDS;
const generation = process.env.TRACK_GENERATION ? JSON.parse(process.env.TRACK_GENERATION) : null;
const prefix = generation ? `${generation.profile ?? 'race'}-` : '';
for (const seed of seeds) {
  const definition = createProceduralTrack(seed, generation ?? {});
  const model = buildTrackModel(definition);
  const record = {
    paddockjs: version,
    trackSeed: seed,
    ...(generation ? { trackGeneration: generation } : {}),
    seed: definition.seed,
    name: definition.name,
    length: metres(model.length),
    sampleCount: model.samples.length - 1,
    centerlineControls: definition.centerlineControls.map(point),
    centerline: model.samples.map(point),
    drsZones: model.drsZones.map(({ id, startRatio, endRatio }) => ({ id, startRatio, endRatio })),
    pitLane: pitLaneRecord(model.pitLane),
  };
  writeFileSync(join(outDir, `${prefix}seed-${seed}.json`), `${JSON.stringify(record)}\n`);
  console.log(`seed ${seed}: ${record.name}, ${record.length} m, pit side ${record.pitLane?.side}`);
}
