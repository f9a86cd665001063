// Selene's status page: plain JavaScript, no libraries, nothing fetched from outside this node.
'use strict';

const $ = (sel) => document.querySelector(sel);

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '–' : String(text);
  row.appendChild(td);
  return td;
}

function fill(tbody, rows, columns) {
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    for (const c of columns) cell(tr, typeof c === 'function' ? c(r) : r[c]);
    tbody.appendChild(tr);
  }
}

function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return (u === 0 ? n : n.toFixed(1)) + ' ' + units[u];
}

async function getJson(url) {
  const r = await fetch(url, { headers: { 'Accept': 'application/json' } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.detail || body.error || ('HTTP ' + r.status));
  return body;
}

async function refreshStatus() {
  const s = await getJson('/status');
  const n = s.node;
  $('#node-line').textContent = `${n.shape} · ${s.config.layout.name} · device ${n.device} · `
    + `${n.ready ? 'ready' : 'not ready'} · up ${n.uptimeSeconds} s · max age ${s.config.maxAge}`;
  fill($('#tiers tbody'), s.tiers, ['tier', (t) => t.configured ? 'yes' : 'no', (t) => t.records,
    (t) => t.tier === 'memory' ? `warm ${bytes(t.warmBytes)}, in use ${bytes(t.bytesInUse)}`
      : t.tier === 'disk' ? (t.configured ? `${t.dir}, ${bytes(t.bytes)}` : '')
      : (t.managers || []).join(', ')]);
  const sl = s.slots;
  fill($('#slots tbody'), [
    ['total', sl.total], ['in use', sl.inUse], ['free', sl.free], ['clean', sl.clean], ['intake', sl.intake],
    ['slot size', bytes(sl.slotBytes)], ['publications in flight', s.intake.inFlight],
  ], [0, 1]);
}

function drawChart(samples) {
  const canvas = $('#chart');
  const g = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, pad = 36;
  g.clearRect(0, 0, w, h);
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = '#667';
  if (samples.length === 0) {
    g.fillText('no samples yet', pad, h / 2);
    return 0;
  }
  const total = Math.max(1, ...samples.map((s) => s.totalSlots));
  const maxRecords = Math.max(1, ...samples.map((s) => s.residentRecords));
  const t0 = samples[0].epochMillis, t1 = Math.max(t0 + 1, samples[samples.length - 1].epochMillis);
  const x = (t) => pad + (w - 2 * pad) * (t - t0) / (t1 - t0);
  const y = (v, max) => h - pad - (h - 2 * pad) * v / max;
  g.strokeStyle = '#dde1e7';
  g.strokeRect(pad, pad, w - 2 * pad, h - 2 * pad);
  g.fillText(String(total) + ' slots', 2, pad - 6);
  g.fillText('0', pad - 12, h - pad + 4);
  g.fillText(new Date(t0).toLocaleTimeString(), pad, h - pad + 16);
  g.fillText(new Date(t1).toLocaleTimeString(), w - pad - 60, h - pad + 16);
  const area = (value, color) => {
    g.beginPath();
    g.moveTo(x(samples[0].epochMillis), y(0, total));
    for (const s of samples) g.lineTo(x(s.epochMillis), y(value(s), total));
    g.lineTo(x(samples[samples.length - 1].epochMillis), y(0, total));
    g.closePath();
    g.fillStyle = color;
    g.fill();
  };
  const line = (value, max, color) => {
    g.beginPath();
    samples.forEach((s, i) => (i === 0 ? g.moveTo : g.lineTo).call(g, x(s.epochMillis), y(value(s), max)));
    g.strokeStyle = color;
    g.lineWidth = 2;
    g.stroke();
  };
  area((s) => s.usedSlots, '#3b6fd8');
  area((s) => Math.max(0, s.cleanSlots), '#8fb3f0');
  line((s) => s.intakeSlots, total, '#d8703b');
  line((s) => s.residentRecords, maxRecords, '#2e9a5a');
  return samples.length;
}

async function refreshHistory() {
  const h = await getJson('/status/history');
  const points = drawChart(h.samples);
  document.body.dataset.chartPoints = String(points);
  const minutes = (h.intervalMillis * h.capacity / 60000).toFixed(0);
  $('#chart-status').textContent = `drawn ${points} points (one per ${h.intervalMillis} ms, last ${minutes} min)`;
  const events = h.events.slice(0, 30);
  if (events.length === 0) {
    fill($('#events tbody'), [{ none: 'none' }], ['none', () => '', () => '']);
  } else {
    fill($('#events tbody'), events, [(e) => new Date(e.epochMillis).toLocaleTimeString(), 'counter', 'count']);
  }
}

async function search(ns, key) {
  const status = $('#search-status');
  status.className = '';
  status.textContent = `looking up ${ns}/${key}…`;
  $('#chain tbody').replaceChildren();
  $('#trace tbody').replaceChildren();
  document.body.dataset.traceEvents = '0';
  const path = encodeURIComponent(ns) + '/' + encodeURIComponent(key);
  let found = [];
  try {
    const rec = await getJson('/records/' + path);
    fill($('#chain tbody'), rec.chain, [(r) => rec.chain.indexOf(r), 'key', (r) => r.hasRow ? 'yes' : 'no', 'tier',
      'state', 'slots', (r) => r.idleMillis + ' ms']);
    found.push(`${rec.state}, chain of ${rec.chain.length}${rec.chainComplete ? '' : ' (incomplete)'}`);
  } catch (e) {
    found.push('record: ' + e.message);
  }
  try {
    const tr = await getJson('/trace/' + path);
    fill($('#trace tbody'), tr.events, ['time', 'actor', 'message']);
    document.body.dataset.traceEvents = String(tr.events.length);
    found.push(`${tr.events.length} trace events`);
  } catch (e) {
    found.push('trace: ' + e.message);
    status.className = 'error';
  }
  status.textContent = found.join(' · ');
}

$('#search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const ns = $('#ns').value.trim(), key = $('#key').value.trim();
  history.replaceState(null, '', `?ns=${encodeURIComponent(ns)}&key=${encodeURIComponent(key)}`);
  search(ns, key);
});

async function tick() {
  try {
    await Promise.all([refreshStatus(), refreshHistory()]);
  } catch (e) {
    $('#node-line').textContent = 'cannot reach the node: ' + e.message;
  }
}

const params = new URLSearchParams(location.search);
if (params.get('ns') && params.get('key')) {
  $('#ns').value = params.get('ns');
  $('#key').value = params.get('key');
  search(params.get('ns'), params.get('key'));
}
tick();
setInterval(tick, 2000);
