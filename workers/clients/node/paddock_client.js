'use strict';
/**
 * A Node.js client of the paddock_ma NDJSON stdio worker (standard library only).
 *
 *   const { PaddockWorker } = require('./paddock_client');
 *   const worker = new PaddockWorker('paddock-ma', ['serve', '--env', 'paddock/gp-v0']);
 *   const reply = await worker.request({ type: 'reset', options: { seed: 7 } });
 *   await worker.close();
 *
 * request(message) numbers a message that has no `id`, writes it as one line, and resolves with the
 * reply object whose `id` matches (a reply with a null id, an error about the line itself, answers the
 * oldest outstanding request: replies come in request order). requestLine(text) does the same with a
 * raw line and resolves with the raw reply line, for byte-level comparisons. Protocol errors are
 * replies with `ok: false`; a request rejects (with an Error saying why) when the worker command cannot
 * start, when the worker exits or writes a line that is not JSON before answering, or when the
 * request's timeout passes first (`{timeoutMs}` per request, or `requestTimeoutMs` for every request;
 * a late reply to a timed-out request is read and dropped). close() never waits on a worker that did
 * not start.
 *
 * Vectors sent in the opt-in compact form `{f32: <base64 of little-endian float32>, shape: [...]}`
 * become Float32Array with decodeF32 (one object) or decodeVectors (a whole reply).
 */
const { spawn } = require('node:child_process');
const os = require('node:os');

const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/** A `{f32, shape}` object (or a plain array) as a Float32Array, checked against its shape. */
function decodeF32(obj) {
  if (Array.isArray(obj)) return Float32Array.from(obj);
  if (!obj || typeof obj.f32 !== 'string' || !Array.isArray(obj.shape)) {
    throw new TypeError('decodeF32: expected {f32: base64 text, shape: [...]} or an array');
  }
  const bytes = Buffer.from(obj.f32, 'base64');
  const count = obj.shape.reduce((a, b) => a * b, 1);
  if (bytes.length !== 4 * count) {
    throw new RangeError(`decodeF32: ${bytes.length} bytes do not hold shape [${obj.shape}] of float32`);
  }
  if (LITTLE_ENDIAN_HOST) {        // the bytes are the array's: one aligned copy
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  }
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 1) out[i] = bytes.readFloatLE(4 * i);   // little-endian on any host
  return out;
}

/** `value` with every `{f32, shape}` object inside it replaced by its Float32Array. */
function decodeVectors(value) {
  if (Array.isArray(value)) return value.map(decodeVectors);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 2 && typeof value.f32 === 'string' && Array.isArray(value.shape)) return decodeF32(value);
    const out = {};
    for (const key of keys) out[key] = decodeVectors(value[key]);
    return out;
  }
  return value;
}

class PaddockWorker {
  /**
   * Spawn `command args...` (e.g. 'python', ['-m', 'paddock_ma.cli', 'serve', '--env', 'paddock/gp-v0']).
   * options.stderr: 'inherit' (default), 'ignore' or 'pipe'; options.env: extra environment variables;
   * options.requestTimeoutMs: a timeout for every request (default none).
   */
  constructor(command, args = [], options = {}) {
    this.command = [command, ...args].join(' ');
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.child = spawn(command, args, {
      stdio: ['pipe', 'pipe', options.stderr || 'inherit'],
      env: { NUMBA_NUM_THREADS: '1', OMP_NUM_THREADS: '1', ...process.env, ...(options.env || {}) },
    });
    this.nextId = 1;
    this.pending = [];              // [{id, raw, resolve, reject, timer, timedOut}] in the order sent
    this.exited = null;             // {code, signal} once the process has ended ({code: null, error} if it never started)
    this.failure = null;
    let markExited;
    this.exitPromise = new Promise((resolve) => { markExited = resolve; });
    const finish = (exited) => {
      if (this.exited) return;
      this.exited = exited;
      markExited(exited);
    };
    this.child.on('exit', (code, signal) => {
      this._failAll(new Error(`worker \`${this.command}\` exited (code ${code}, signal ${signal}) `
        + 'with requests unanswered'));
      finish({ code, signal });
    });
    this.child.on('error', (err) => {
      if (this.child.pid === undefined) {          // never started: no 'exit' will follow
        const failure = new Error(`worker command \`${this.command}\` could not start: ${err.message}`);
        this._failAll(failure);
        finish({ code: null, signal: null, error: failure });
      } else {
        this._failAll(err);
      }
    });
    // EPIPE when the worker is gone: its 'exit' (with the exit code) is the clearer report, so wait a
    // moment for it before failing with the write error itself.
    this.child.stdin.on('error', (err) => {
      setTimeout(() => {
        if (!this.exited) {
          this._failAll(new Error(`worker \`${this.command}\` stopped reading requests (${err.code || err.message})`));
        }
      }, 1000).unref();
    });
    // Lines are cut from raw Buffer chunks and decoded once each: a compact batched reply is megabytes,
    // arriving in 64 KiB reads, and readline would decode and rescan it chunk by chunk.
    this.parts = [];                // Buffer chunks of the line being received
    this.child.stdout.on('data', (chunk) => this._onData(chunk));
  }

  _onData(chunk) {
    let start = 0;
    let newline = chunk.indexOf(10);
    while (newline >= 0) {
      this.parts.push(chunk.subarray(start, newline));
      const line = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
      this.parts = [];
      const end = line.length && line[line.length - 1] === 13 ? line.length - 1 : line.length;   // a CR before LF
      this._onLine(line.toString('utf8', 0, end));
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    if (start < chunk.length) this.parts.push(chunk.subarray(start));
  }

  get pid() { return this.child.pid; }

  _failAll(err) {
    this.failure = this.failure || err;
    for (const entry of this.pending.splice(0)) {
      clearTimeout(entry.timer);
      if (!entry.timedOut) entry.reject(this.failure);
    }
  }

  _onLine(line) {
    let reply;
    try {
      reply = JSON.parse(line);
    } catch (err) {
      this._failAll(new Error(`worker wrote a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    let index = 0;                  // a null id answers the oldest request
    if (reply && reply.id !== null && reply.id !== undefined) {
      index = this.pending.findIndex((entry) => entry.id === reply.id);
    }
    if (index < 0 || this.pending.length === 0) {
      this._failAll(new Error(`worker reply answers no outstanding request: ${line.slice(0, 200)}`));
      return;
    }
    const [entry] = this.pending.splice(index, 1);
    clearTimeout(entry.timer);
    if (!entry.timedOut) entry.resolve(entry.raw ? line : reply);   // a timed-out request's reply is dropped
  }

  _send(id, line, raw, timeoutMs) {
    if (this.failure) return Promise.reject(this.failure);
    if (line.includes('\n')) return Promise.reject(new Error('a request line must not contain a newline'));
    const limit = timeoutMs === undefined ? this.requestTimeoutMs : timeoutMs;
    if (limit !== undefined && limit !== null && !(Number.isFinite(limit) && limit > 0)) {
      return Promise.reject(new RangeError(`timeoutMs must be a positive number of milliseconds, got ${limit}`));
    }
    return new Promise((resolve, reject) => {
      const entry = { id, raw, resolve, reject, timer: null, timedOut: false };
      if (limit) {
        entry.timer = setTimeout(() => {
          entry.timedOut = true;    // stays pending so its late reply is recognised and dropped
          reject(new Error(`worker \`${this.command}\` did not answer request ${JSON.stringify(id)} `
            + `within ${limit} ms`));
        }, limit);
      }
      this.pending.push(entry);
      this.child.stdin.write(`${line}\n`);
    });
  }

  /** Send one message object; resolves with its reply object. options.timeoutMs: reject after it. */
  request(message, options = {}) {
    const id = message.id === undefined ? this.nextId++ : message.id;
    return this._send(id, JSON.stringify({ id, ...message }), false, options.timeoutMs);
  }

  /**
   * Send one raw line (its `id` is read from it unless given); resolves with the raw reply line.
   * options.timeoutMs: reject after it.
   */
  requestLine(line, id, options = {}) {
    let key = id;
    if (key === undefined) {
      try { key = JSON.parse(line).id; } catch (err) { key = null; }   // a malformed line: answered with id null
    }
    return this._send(key === undefined || key === null ? null : key, line, true, options.timeoutMs);
  }

  /** Close stdin (the worker exits at end of input); SIGTERM after timeoutMs, SIGKILL 2 s later. */
  async close(timeoutMs = 5000) {
    if (!this.exited && this.child.pid === undefined) {
      await new Promise((resolve) => setImmediate(resolve));   // let a pending spawn 'error' arrive
    }
    if (!this.exited) {
      this.child.stdin.end();
      const timer = (ms, fn) => setTimeout(() => { if (!this.exited) fn(); }, ms);
      const term = timer(timeoutMs, () => this.child.kill('SIGTERM'));
      const kill = timer(timeoutMs + 2000, () => this.child.kill('SIGKILL'));
      await this.exitPromise;
      clearTimeout(term);
      clearTimeout(kill);
    }
    return this.exited;
  }
}

module.exports = { PaddockWorker, decodeF32, decodeVectors };
