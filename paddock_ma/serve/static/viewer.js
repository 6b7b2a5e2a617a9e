// paddock_ma viewer: draws PaddockJS-shaped preview packets ({type: "preview:snapshot", snapshot, observation,
// meta}) from a live WebSocket stream or a recorded source, over the track's surface raster. No build step,
// no network beyond the server that served this page. window.paddockViewer exposes the state and the
// world -> canvas transform (the tests read what is drawn through it).
'use strict';

const SURFACE_RGB = {
  track: [92, 92, 96], kerb: [200, 40, 40], gravel: [196, 176, 120], grass: [60, 130, 60], barrier: [30, 30, 30],
  'pit-entry': [120, 120, 140], 'pit-lane': [140, 140, 160], 'pit-exit': [120, 120, 140], 'pit-box': [170, 170, 190],
};
const CONTROLLED_COLOURS = ['#00e6ff', '#ff00dc', '#ffe600', '#ff6e00', '#78ff00', '#965aff', '#00ff96', '#ff78aa'];
const BUILT_IN_COLOUR = '#f5f5f5';
const DESTROYED_COLOUR = '#969696';
const CAR_LENGTH = 4.65, CAR_WIDTH = 1.24, MIN_CAR_PIXELS = 10, FOLLOW_PX_PER_M = 5, MAX_FRAMES = 20000;

const $ = (id) => document.getElementById(id);
const canvas = $('view');
const ctx = canvas.getContext('2d');
const state = {
  track: null, trackImage: null, frames: [], index: -1, playing: true, liveEdge: true, follow: '',
  showRays: true, source: null, socket: null, colours: {}, view: { cx: 0, cy: 0, scale: 1 }, drawn: [],
};

// -- sources ---------------------------------------------------------------------------------------
async function getJson(url) {
  const response = await fetch(url, { cache: 'no-store' });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

function setStatus(text, error = false) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

async function listSources() {
  const params = new URLSearchParams(location.search);
  const select = $('source');
  const recorded = (await getJson('/viewer/sources').catch(() => ({ sources: [] }))).sources;
  const options = [['live', 'live stream']];
  recorded.forEach((s, i) => options.push([String(i), `${s.kind}: ${s.name}`]));
  select.innerHTML = '';
  for (const [value, label] of options) select.add(new Option(label, value));
  const wanted = params.get('source') ?? (recorded.length ? '0' : 'live');
  select.value = wanted;
  select.onchange = () => openSource(select.value);
  await openSource(wanted);
}

function closeSource() {
  if (state.socket) { state.socket.onclose = null; state.socket.close(); state.socket = null; }
  state.frames = []; state.index = -1; state.track = null; state.trackImage = null; state.colours = {};
}

async function openSource(value) {
  closeSource();
  state.source = value;
  if (value === 'live') return openLive();
  const doc = await getJson(`/viewer/source/${value}`);
  setTrack(doc.track);
  doc.frames.forEach((f) => addFrame(f));
  state.liveEdge = false; $('live-edge').checked = false;
  state.playing = false; $('play').textContent = '▶';
  showFrame(0);
  if (doc.divergence) setStatus(`${doc.kind} ${doc.name}: ${doc.divergence}`, true);
  else setStatus(`${doc.kind} ${doc.name}: ${doc.frames.length} frames`);
}

function openLive() {
  const params = new URLSearchParams(location.search);
  const url = params.get('live') || `ws://${location.host}/preview`;
  const httpBase = url.replace(/^ws/, 'http').replace(/\/preview$/, '');
  const fetchTrack = async () => {
    while (state.source === 'live' && !state.track) {
      try { setTrack(await getJson(`${httpBase}/preview/track`)); } catch { await new Promise((r) => setTimeout(r, 500)); }
    }
  };
  fetchTrack();
  const socket = new WebSocket(url);
  state.socket = socket;
  socket.onopen = () => setStatus(`live: ${url}`);
  socket.onclose = () => { setStatus(`live stream closed: ${url}`, true); };
  socket.onmessage = (event) => {
    const packet = JSON.parse(event.data);
    if (packet.type !== 'preview:snapshot') return;
    addFrame(packet);
    if (state.liveEdge) showFrame(state.frames.length - 1);
    else updateTimeline();
  };
}

// -- frames ----------------------------------------------------------------------------------------
function addFrame(packet) {
  // positions in metres: PaddockJS's packets give them in its simulation units (meta.unitsPerMeter a metre)
  const units = packet.meta?.unitsPerMeter;
  if (units && units !== 1) {
    for (const car of packet.snapshot.cars) { car.x /= units; car.y /= units; }
    packet.meta.unitsPerMeter = 1;
  }
  state.frames.push(packet);
  if (state.frames.length > MAX_FRAMES) { state.frames.shift(); state.index = Math.max(0, state.index - 1); }
  const controlled = packet.meta?.controlledDrivers ?? packet.snapshot.cars.filter((c) => c.controlled).map((c) => c.id);
  controlled.forEach((id) => {
    if (!(id in state.colours)) state.colours[id] = CONTROLLED_COLOURS[Object.keys(state.colours).length % CONTROLLED_COLOURS.length];
  });
  const follow = $('follow');
  for (const car of packet.snapshot.cars) {
    if (![...follow.options].some((o) => o.value === car.id)) follow.add(new Option(car.id, car.id));
  }
}

function currentFrame() { return state.frames[state.index] ?? null; }

function showFrame(index) {
  state.index = Math.max(0, Math.min(index, state.frames.length - 1));
  updateTimeline();
  draw();
}

function updateTimeline() {
  const slider = $('timeline');
  slider.max = String(Math.max(0, state.frames.length - 1));
  slider.value = String(Math.max(0, state.index));
  const frame = currentFrame();
  $('frame-label').textContent = `frame ${state.index + 1} / ${state.frames.length}` + (frame ? ` · step ${frame.snapshot.step}` : '');
}

// -- track -----------------------------------------------------------------------------------------
function setTrack(track) {
  state.track = track;
  const codes = Uint8Array.from(atob(track.surfaces), (c) => c.charCodeAt(0));
  const image = document.createElement('canvas');
  image.width = track.width; image.height = track.height;
  const pixels = image.getContext('2d').createImageData(track.width, track.height);
  for (let i = 0; i < codes.length; i += 1) {
    const rgb = SURFACE_RGB[track.surfaceNames[codes[i]]] ?? [30, 30, 30];
    pixels.data[4 * i] = rgb[0]; pixels.data[4 * i + 1] = rgb[1]; pixels.data[4 * i + 2] = rgb[2]; pixels.data[4 * i + 3] = 255;
  }
  image.getContext('2d').putImageData(pixels, 0, 0);
  state.trackImage = image;
  draw();
}

// -- drawing ---------------------------------------------------------------------------------------
function carColour(car) {
  if (car.destroyed) return DESTROYED_COLOUR;
  return state.colours[car.id] ?? BUILT_IN_COLOUR;
}

function chooseView(frame) {
  const w = canvas.width, h = canvas.height, t = state.track;
  const followed = frame?.snapshot.cars.find((c) => c.id === state.follow);
  if (followed) {
    state.view = { cx: followed.x, cy: followed.y, scale: FOLLOW_PX_PER_M };
  } else if (t) {
    const tw = t.width * t.cell, th = t.height * t.cell;
    state.view = { cx: t.x0 + tw / 2, cy: t.y0 + th / 2, scale: 0.96 * Math.min(w / tw, h / th) };
  }
}

function worldToScreen(x, y) {
  const v = state.view;
  return [(x - v.cx) * v.scale + canvas.width / 2, (y - v.cy) * v.scale + canvas.height / 2];
}

function draw() {
  const frame = currentFrame();
  chooseView(frame);
  const v = state.view;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#101114';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const t = state.track;
  if (t && state.trackImage) {
    ctx.setTransform(v.scale, 0, 0, v.scale, canvas.width / 2 - v.cx * v.scale, canvas.height / 2 - v.cy * v.scale);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(state.trackImage, t.x0, t.y0, t.width * t.cell, t.height * t.cell);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.strokeStyle = 'rgba(255,255,255,0.35)'; ctx.setLineDash([6, 6]); ctx.lineWidth = 1;
    ctx.beginPath();
    t.centreline.forEach(([x, y], i) => { const [px, py] = worldToScreen(x, y); if (i) ctx.lineTo(px, py); else ctx.moveTo(px, py); });
    ctx.closePath(); ctx.stroke(); ctx.setLineDash([]);
  }
  state.drawn = [];
  if (!frame) { updatePanel(null, null); return; }
  const cars = frame.snapshot.cars;
  if (state.showRays) cars.forEach((car) => { if (car.controlled && (!state.follow || car.id === state.follow)) drawSenses(car, frame.observation?.[car.id]?.object); });
  const label = [];
  for (const car of cars) {
    const [px, py] = worldToScreen(car.x, car.y);
    const length = Math.max(CAR_LENGTH * v.scale, MIN_CAR_PIXELS), width = Math.max(CAR_WIDTH * v.scale, MIN_CAR_PIXELS * 0.4);
    ctx.save();
    ctx.translate(px, py); ctx.rotate(car.heading);
    ctx.fillStyle = carColour(car);
    ctx.fillRect(-length / 2, -width / 2, length, width);
    ctx.restore();
    state.drawn.push({ id: car.id, x: px, y: py, colour: carColour(car) });
    label.push([car, px, py]);
  }
  ctx.font = '11px system-ui, sans-serif';
  for (const [car, px, py] of label) {
    ctx.fillStyle = car.id === state.follow ? '#ffffff' : 'rgba(255,255,255,0.8)';
    ctx.fillText(car.id, px + 8, py - 8);
  }
  updatePanel(frame, cars.find((c) => c.id === state.follow) ?? cars.find((c) => c.controlled) ?? null);
}

function drawSenses(car, object) {
  if (!object) return;
  const [px, py] = worldToScreen(car.x, car.y);
  const s = state.view.scale;
  ctx.lineWidth = 1;
  for (const ray of object.rays ?? []) {
    const angle = car.heading + (ray.angleDegrees * Math.PI) / 180;
    const reach = Math.min(ray.track?.distanceMeters ?? ray.lengthMeters, ray.lengthMeters);
    ctx.strokeStyle = ray.track?.hit ? 'rgba(250,250,120,0.8)' : 'rgba(250,250,120,0.3)';
    ctx.beginPath(); ctx.moveTo(px, py);
    ctx.lineTo(px + reach * s * Math.cos(angle), py + reach * s * Math.sin(angle)); ctx.stroke();
    if (ray.car?.hit) {
      const d = ray.car.distanceMeters * s;
      ctx.fillStyle = '#ff5050';
      ctx.fillRect(px + d * Math.cos(angle) - 2, py + d * Math.sin(angle) - 2, 4, 4);
    }
  }
  const h = car.heading;
  ctx.strokeStyle = 'rgba(255,160,60,0.9)'; ctx.setLineDash([3, 3]);
  for (const other of object.nearbyCars ?? []) {
    const f = other.relativeForwardMeters, r = other.relativeRightMeters;
    const ox = px + s * (f * Math.cos(h) - r * Math.sin(h)), oy = py + s * (f * Math.sin(h) + r * Math.cos(h));
    ctx.beginPath(); ctx.moveTo(px, py); ctx.lineTo(ox, oy); ctx.stroke();
  }
  ctx.setLineDash([]);
}

function updatePanel(frame, car) {
  const table = $('car-facts');
  table.innerHTML = '';
  $('car-title').textContent = car ? car.id : 'no car selected';
  if (!car) return;
  const rows = [['step', frame.snapshot.step], ['speed km/h', car.speedKph?.toFixed(1)], ['lap', car.lap],
    ['surface', car.surface], ['on track', car.onTrack], ['destroyed', car.destroyed],
    ['episode running', car.episodeRunning], ['end reason', car.endReason ?? '—']];
  for (const [name, value] of Object.entries(car.metrics ?? {})) rows.push([name, typeof value === 'number' ? +value.toFixed(3) : value]);
  for (const [name, value] of rows) {
    const tr = table.insertRow();
    tr.insertCell().textContent = name;
    tr.insertCell().textContent = String(value);
    tr.dataset.name = name;
  }
}

// -- controls --------------------------------------------------------------------------------------
function resize() {
  canvas.width = canvas.clientWidth; canvas.height = canvas.clientHeight;
  draw();
}

$('timeline').addEventListener('input', (e) => {
  state.liveEdge = false; $('live-edge').checked = false;
  showFrame(Number(e.target.value));
});
$('live-edge').addEventListener('change', (e) => { state.liveEdge = e.target.checked; if (state.liveEdge) showFrame(state.frames.length - 1); });
$('follow').addEventListener('change', (e) => { state.follow = e.target.value; draw(); });
$('rays').addEventListener('change', (e) => { state.showRays = e.target.checked; draw(); });
$('play').addEventListener('click', () => { state.playing = !state.playing; $('play').textContent = state.playing ? '⏸' : '▶'; });
canvas.addEventListener('click', (e) => {
  const rect = canvas.getBoundingClientRect();
  const x = (e.clientX - rect.left) * (canvas.width / rect.width), y = (e.clientY - rect.top) * (canvas.height / rect.height);
  const hit = state.drawn.find((c) => Math.hypot(c.x - x, c.y - y) < 12);
  if (hit) { state.follow = hit.id; $('follow').value = hit.id; draw(); }
});
setInterval(() => {
  if (state.playing && !state.liveEdge && state.index < state.frames.length - 1) showFrame(state.index + 1);
}, 100);
window.addEventListener('resize', resize);

window.paddockViewer = { state, worldToScreen, carColour, draw, showFrame, openSource };
resize();
listSources().catch((error) => setStatus(String(error), true));
