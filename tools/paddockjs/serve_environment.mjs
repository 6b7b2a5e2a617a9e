#!/usr/bin/env node
// PaddockJS 2.0.0's own worker protocol as an NDJSON worker: the reference the port of its
// environment tests (tests/protocol/paddockjs_port) is checked against.
//
//   node tools/paddockjs/serve_environment.mjs <paddockjs-checkout> --config FILE
//
// It creates PaddockJS's environment from the JSON config in FILE (createPaddockEnvironment), wraps it
// in PaddockJS's createEnvironmentWorkerProtocol, and answers one JSON reply line per JSON request
// line on stdin, as `paddock-ma serve --config FILE` does. A config PaddockJS refuses: its message on
// stderr and exit status 2. JSON.stringify does the rest as any PaddockJS bridge would (NaN becomes
// null, a Float32Array an index-keyed object).
//
//   PADDOCKJS_CHECKOUT=/tmp/paddockjs pytest tests/protocol/paddockjs_port
//
// runs the port against this worker instead of paddock_ma's (every assertion should hold there,
// save those the port names as unable to hold over JSON).

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import url from 'node:url';

const [checkoutArg, flag, configPath] = process.argv.slice(2);
const checkout = path.resolve(checkoutArg ?? '');
if (flag !== '--config' || !configPath || !fs.existsSync(path.join(checkout, 'src/environment/index.js'))) {
  console.error('usage: serve_environment.mjs <paddockjs-checkout> --config FILE  (a PaddockJS 2.0.0 source tree)');
  process.exit(2);
}
const load = (rel) => import(url.pathToFileURL(path.join(checkout, rel)).href);
const { createPaddockEnvironment, createEnvironmentWorkerProtocol } = await load('src/environment/index.js');

let protocol;
try {
  const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
  protocol = createEnvironmentWorkerProtocol(createPaddockEnvironment(config));
} catch (error) {
  console.error(`serve_environment: error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ id: null, ok: false, type: 'error', error: error.message })}\n`);
    continue;
  }
  process.stdout.write(`${JSON.stringify(protocol.handle(message))}\n`);
}
