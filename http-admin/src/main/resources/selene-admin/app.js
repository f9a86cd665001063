// Selene's status page: plain JavaScript and uPlot (served by the node itself), nothing fetched from outside it.
'use strict';

const $ = (sel) => document.querySelector(sel);
const NONE = '–';

// --- times: local HH:MM:SS on the page, ISO 8601 (UTC) in tooltips -------------------------------------------

const pad = (n, w = 2) => String(n).padStart(w, '0');

function hms(ms, withMillis = false) {
  const d = new Date(ms);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withMillis ? `${t}.${pad(d.getMilliseconds(), 3)}` : t;
}

const iso = (ms) => new Date(ms).toISOString();

function timeElement(ms, withMillis = false) {
  const t = document.createElement('time');
  t.dateTime = iso(ms);
  t.title = iso(ms);
  t.textContent = hms(ms, withMillis);
  return t;
}

// --- tables ---------------------------------------------------------------------------------------------------

function cell(row, value) {
  const td = document.createElement('td');
  if (value instanceof Node) {
    td.appendChild(value);
  } else {
    td.textContent = value === null || value === undefined || value === '' ? NONE : String(value);
  }
  row.appendChild(td);
  return td;
}

function fill(tbody, rows, columns, onRow) {
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    for (const c of columns) cell(tr, typeof c === 'function' ? c(r) : r[c]);
    if (onRow) onRow(tr, r);
    tbody.appendChild(tr);
  }
}

function placeholder(tbody, columns, text) {
  const tr = document.createElement('tr');
  const td = cell(tr, text);
  td.colSpan = columns;
  tbody.replaceChildren(tr);
}

function bytes(n) {
  if (n === null || n === undefined) return NONE;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return (u === 0 ? n : n.toFixed(1)) + ' ' + units[u];
}

function millis(ms) {
  if (ms === null || ms === undefined) return NONE;
  return ms < 1000 ? `${ms} ms` : ms < 60000 ? `${(ms / 1000).toFixed(1)} s`
    : ms < 3600000 ? `${(ms / 60000).toFixed(1)} min` : `${(ms / 3600000).toFixed(1)} h`;
}

async function getJson(url) {
  const r = await fetch(url, { headers: { 'Accept': 'application/json' } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.detail || body.error || ('HTTP ' + r.status));
  return body;
}

// --- status ---------------------------------------------------------------------------------------------------

async function refreshStatus() {
  const s = await getJson('/status');
  const n = s.node;
  $('#node-line').textContent = `${n.shape} · ${s.config.layout.name} · device ${n.device} · `
    + `${n.ready ? 'ready' : 'not ready'} · up ${n.uptimeSeconds} s · max age ${s.config.maxAge}`;
  $('#node-line').title = 'sampled at ' + s.sampledAt;
  fill($('#tiers tbody'), s.tiers, ['tier', (t) => t.configured ? 'yes' : 'no', (t) => t.records,
    (t) => t.tier === 'memory' ? `warm ${bytes(t.warmBytes)}, in use ${bytes(t.bytesInUse)}`
      : t.tier === 'disk' ? (t.configured ? `${t.dir}, ${bytes(t.bytes)}` : '')
      : (t.managers || []).join(', ')]);
  const sl = s.slots;
  fill($('#slots tbody'), [
    ['total', sl.total], ['in use', sl.inUse], ['free', sl.free], ['droppable', sl.clean], ['intake', sl.intake],
    ['slot size', bytes(sl.slotBytes)], ['publications in flight', s.intake.inFlight],
  ], [0, 1]);
}

// --- charts (uPlot) -------------------------------------------------------------------------------------------

const RATES = [
  ['publications', 'publications', '#3b6fd8'],
  ['lookups', 'lookups', '#2e9a5a'],
  ['restoredRecords', 'records restored', '#8a4fbf'],
  ['evictions', 'evictions', '#d8703b'],
  ['abandonsAndExpiries', 'abandons and expiries', '#b3261e'],
];

const charts = {};

function chartWidth(el) {
  return Math.max(320, el.clientWidth || 900);
}

const timeSeries = { label: 'time', value: (u, v) => v === null || v === undefined ? NONE : iso(v * 1000) };
// Ticks at whole seconds at least, so that no two read the same.
const timeAxis = { label: 'local time', incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
  values: (u, splits) => splits.map((v) => hms(v * 1000)) };
const fromZero = (u, min, max) => [0, Math.max(1, max * 1.05)];

function plot(el, series, axes, scales, data, pointsAttr) {
  return new uPlot({
    width: chartWidth(el),
    height: 240,
    series: [timeSeries, ...series],
    axes: [timeAxis, ...axes],
    scales: { x: { time: true }, ...scales },
    cursor: { drag: { x: false, y: false } },
    hooks: { draw: [(u) => {
      // What was drawn, and where (page coordinates of the plotting area), for people and tests alike.
      const r = u.over.getBoundingClientRect();
      el.dataset.plotBox = [r.left + scrollX, r.top + scrollY, r.width, r.height].map(Math.round).join(',');
      document.body.dataset[pointsAttr] = String(u.data[0].length);
    }] },
  }, data, el);
}

function drawCharts(samples) {
  const xs = samples.map((s) => s.epochMillis / 1000);
  const disk = samples.some((s) => s.diskRecords !== null && s.diskRecords !== undefined);
  const occupancy = [xs,
    samples.map((s) => s.usedSlots),
    samples.map((s) => Math.max(0, s.cleanSlots)),
    samples.map((s) => s.intakeSlots),
    samples.map((s) => s.residentRecords)];
  if (disk) occupancy.push(samples.map((s) => s.diskRecords));
  const rates = [xs, ...RATES.map(([name]) => samples.map((s) => (s.rates && name in s.rates) ? s.rates[name] : null))];

  if (!charts.occupancy || charts.occupancyDisk !== disk) {
    if (charts.occupancy) charts.occupancy.destroy();
    const series = [
      { label: 'slots in use', scale: 'slots', stroke: '#3b6fd8', fill: 'rgba(59,111,216,0.18)', width: 2 },
      { label: 'droppable slots', scale: 'slots', stroke: '#8fb3f0', width: 2 },
      { label: 'intake reserve', scale: 'slots', stroke: '#d8703b', dash: [6, 4], width: 1.5 },
      { label: 'records in memory', scale: 'records', stroke: '#2e9a5a', width: 2 },
    ];
    if (disk) series.push({ label: 'records on disk', scale: 'records', stroke: '#8a4fbf', width: 2 });
    charts.occupancy = plot($('#chart'), series,
      [{ scale: 'slots', label: 'slots' }, { scale: 'records', label: 'records', side: 1, grid: { show: false } }],
      { slots: { range: fromZero }, records: { range: fromZero } }, occupancy, 'chartPoints');
    charts.occupancyDisk = disk;
  } else {
    charts.occupancy.setData(occupancy);
  }
  if (!charts.rates) {
    charts.rates = plot($('#rates'), RATES.map(([, label, color]) => ({ label, scale: 'rate', stroke: color, width: 2,
      value: (u, v) => v === null || v === undefined ? NONE : v.toFixed(1) + '/s' })),
    [{ scale: 'rate', label: 'per second' }], { rate: { range: fromZero } }, rates, 'ratePoints');
  } else {
    charts.rates.setData(rates);
  }
}

window.addEventListener('resize', () => {
  for (const [id, u] of [['#chart', charts.occupancy], ['#rates', charts.rates]]) {
    if (u) u.setSize({ width: chartWidth($(id)), height: 240 });
  }
});

async function refreshHistory() {
  const h = await getJson('/status/history');
  const minutes = (h.intervalMillis * h.capacity / 60000).toFixed(0);
  const n = h.samples.length;
  try {
    drawCharts(h.samples);
    $('#chart-status').className = '';
    $('#chart-status').textContent = n === 0 ? 'no samples yet'
      : `${n} samples, one per ${h.intervalMillis} ms, up to the last ${minutes} min`;
  } catch (e) {
    $('#chart-status').className = 'error';
    $('#chart-status').textContent = 'cannot draw the charts: ' + e.message;
  }
  const from = n === 0 ? null : h.samples[0].epochMillis;
  $('#events-status').textContent = from === null ? '' : `since ${hms(from)}`;
  $('#events-status').title = from === null ? '' : iso(from);
  const groups = h.eventsByReason;
  document.body.dataset.eventGroups = String(groups.length);
  if (groups.length === 0) {
    placeholder($('#events tbody'), 6, 'none');
  } else {
    fill($('#events tbody'), groups, ['kind', 'reason', 'count', 'samples', (g) => timeElement(g.firstEpochMillis),
      (g) => timeElement(g.lastEpochMillis)], (tr, g) => { tr.title = g.counter; tr.dataset.counter = g.counter; });
  }
}

// --- record list ----------------------------------------------------------------------------------------------

const list = { tier: '', namespace: '', offset: 0, limit: 20, total: 0 };

function recordHref(ns, hash) {
  const p = new URLSearchParams(location.search);
  p.set('ns', ns);
  p.set('key', hash);
  return '?' + p.toString() + '#record';
}

function recordLink(ns, hash, text) {
  const a = document.createElement('a');
  a.href = recordHref(ns, hash);
  a.textContent = text;
  a.className = 'record-link';
  a.addEventListener('click', (ev) => { ev.preventDefault(); ev.stopPropagation(); openRecord(ns, hash); });
  return a;
}

function listUrl() {
  const p = new URLSearchParams({ offset: list.offset, limit: list.limit });
  if (list.tier) p.set('tier', list.tier);
  if (list.namespace) p.set('namespace', list.namespace);
  return '/records?' + p.toString();
}

function keepListInUrl() {
  const p = new URLSearchParams(location.search);
  for (const [k, v] of [['tier', list.tier], ['namespace', list.namespace], ['offset', list.offset],
    ['limit', list.limit]]) {
    if (v === '' || (k === 'offset' && v === 0) || (k === 'limit' && v === 20)) p.delete(k); else p.set(k, v);
  }
  const q = p.toString();
  history.replaceState(null, '', (q ? '?' + q : location.pathname) + location.hash);
}

async function refreshRecords() {
  const status = $('#records-status');
  try {
    const page = await getJson(listUrl());
    list.total = page.total;
    if (page.records.length === 0 && list.offset > 0 && page.total > 0) {
      list.offset = Math.max(0, Math.floor((page.total - 1) / list.limit) * list.limit);
      return refreshRecords();
    }
    status.className = '';
    status.textContent = page.total === 0 ? 'none'
      : `${page.offset + 1}–${page.offset + page.records.length} of ${page.total}`;
    if (page.records.length === 0) {
      placeholder($('#records tbody'), 9, 'no records');
    } else {
      fill($('#records tbody'), page.records, [(r) => recordLink(r.namespace, r.hash, r.key), 'tier', 'state',
        (r) => r.hasRow ? 'yes' : 'no', 'slots', (r) => bytes(r.bytes), (r) => millis(r.idleMillis),
        (r) => r.durable ? 'yes' : 'no', 'parent'], (tr, r) => {
        tr.dataset.key = r.key;
        tr.addEventListener('click', () => openRecord(r.namespace, r.hash));
        if (r.key === selected) tr.className = 'selected';
      });
    }
    document.body.dataset.recordsShown = String(page.records.length);
  } catch (e) {
    status.className = 'error';
    status.textContent = e.message;
  }
  $('#records-prev').disabled = list.offset === 0;
  $('#records-next').disabled = list.offset + list.limit >= list.total;
}

$('#records-filter').addEventListener('submit', (ev) => {
  ev.preventDefault();
  list.tier = $('#records-tier').value;
  list.namespace = $('#records-ns').value.trim();
  list.limit = Number($('#records-limit').value);
  list.offset = 0;
  keepListInUrl();
  refreshRecords();
});
$('#records-prev').addEventListener('click', () => {
  list.offset = Math.max(0, list.offset - list.limit);
  keepListInUrl();
  refreshRecords();
});
$('#records-next').addEventListener('click', () => {
  if (list.offset + list.limit < list.total) list.offset += list.limit;
  keepListInUrl();
  refreshRecords();
});

// --- one record: chain and actor trace ------------------------------------------------------------------------

const TRACE_COLUMNS = ['time', 'epochMicros', 'epochMillis', 'sinceMicros', 'actor', 'message', 'outcome'];

/** An event's time to the microsecond (local), the server's ISO 8601 (UTC) in its tooltip. */
function microsElement(e) {
  const t = timeElement(e.epochMillis, true);
  if (e.epochMicros !== undefined) t.textContent += pad(e.epochMicros % 1000, 3);
  if (e.time) t.title = e.time;
  return t;
}

/** Time since the record's previous event, in the unit that reads best. */
function since(us) {
  if (us === null || us === undefined) return NONE;
  return us < 1000 ? `+${us} µs` : us < 1000000 ? `+${(us / 1000).toFixed(us < 10000 ? 2 : 1)} ms`
    : '+' + millis(Math.round(us / 1000));
}
let selected = null;

function more(event) {
  const extra = Object.entries(event).filter(([k, v]) => !TRACE_COLUMNS.includes(k) && v !== null);
  if (extra.length === 0) return '';
  const span = document.createElement('span');
  span.className = 'more';
  span.textContent = extra.map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' · ');
  return span;
}

function openRecord(ns, hash) {
  const p = new URLSearchParams(location.search);
  p.set('ns', ns);
  p.set('key', hash);
  history.pushState(null, '', '?' + p.toString() + '#record');
  search(ns, hash);
  $('#record').scrollIntoView();
}

async function search(ns, key) {
  $('#ns').value = ns;
  $('#key').value = key;
  const status = $('#search-status');
  status.className = '';
  status.textContent = `looking up ${ns}/${key}…`;
  $('#chain tbody').replaceChildren();
  $('#trace tbody').replaceChildren();
  document.body.dataset.traceEvents = '0';
  const path = encodeURIComponent(ns) + '/' + encodeURIComponent(key);
  const found = [];
  try {
    const rec = await getJson('/records/' + path);
    selected = rec.key;
    for (const tr of document.querySelectorAll('#records tbody tr')) {
      tr.className = tr.dataset.key === selected ? 'selected' : '';
    }
    fill($('#chain tbody'), rec.chain, [(r) => rec.chain.indexOf(r), (r) => recordLink(r.namespace, r.hash, r.key),
      (r) => r.hasRow ? 'yes' : 'no', 'tier', 'state', 'slots', (r) => millis(r.idleMillis)], (tr, r) => {
      tr.dataset.key = r.key;
      if (r.key === rec.key) tr.className = 'selected';
      tr.addEventListener('click', () => openRecord(r.namespace, r.hash));
    });
    found.push(`${rec.key}: ${rec.state}, chain of ${rec.chain.length}${rec.chainComplete ? '' : ' (incomplete)'}`);
  } catch (e) {
    found.push('record: ' + e.message);
  }
  try {
    const tr = await getJson('/trace/' + path);
    fill($('#trace tbody'), tr.events, [(e) => e.epochMillis === undefined ? e.time : microsElement(e),
      (e) => since(e.sinceMicros), 'actor', 'message', 'outcome', more], (row, e) => {
      if (e.outcome) row.dataset.outcome = e.outcome;
    });
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
  openRecord($('#ns').value.trim(), $('#key').value.trim());
});

function fromUrl() {
  const params = new URLSearchParams(location.search);
  list.tier = params.get('tier') || '';
  list.namespace = params.get('namespace') || '';
  list.offset = Math.max(0, Number.parseInt(params.get('offset') || '0', 10) || 0);
  list.limit = Math.min(1000, Math.max(1, Number.parseInt(params.get('limit') || '20', 10) || 20));
  $('#records-tier').value = list.tier;
  $('#records-ns').value = list.namespace;
  if (![...$('#records-limit').options].some((o) => o.value === String(list.limit))) {
    $('#records-limit').add(new Option(String(list.limit)));
  }
  $('#records-limit').value = String(list.limit);
  if (params.get('ns') && params.get('key')) search(params.get('ns'), params.get('key'));
}

window.addEventListener('popstate', fromUrl);

async function tick() {
  try {
    await Promise.all([refreshStatus(), refreshHistory(), refreshRecords()]);
  } catch (e) {
    $('#node-line').textContent = 'cannot reach the node: ' + e.message;
  }
}

fromUrl();
tick();
setInterval(tick, 2000);
