// A pool manager's status page: plain JavaScript, no libraries; everything comes from this manager's /status.
'use strict';

const $ = (sel) => document.querySelector(sel);

function fill(tbody, rows, columns) {
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    for (const c of columns) {
      const td = document.createElement('td');
      const v = typeof c === 'function' ? c(r) : r[c];
      td.textContent = v === null || v === undefined ? '–' : String(v);
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return (u === 0 ? n : n.toFixed(1)) + ' ' + units[u];
}

async function refresh() {
  const r = await fetch('/status', { headers: { 'Accept': 'application/json' } });
  const s = await r.json();
  if (!r.ok) throw new Error(s.detail || s.error || ('HTTP ' + r.status));
  const n = s.node, st = s.store, c = s.config;
  $('#node-line').textContent = `${n.address} · ${c.layout.name} · ${n.ready ? 'ready' : 'not ready'} · `
    + `up ${n.uptimeSeconds} s · replicas ${c.replicas} · max age ${c.maxAge}`;
  fill($('#store tbody'), [
    ['records', st.records], ['held', `${bytes(st.bytes)} of ${bytes(st.capacityBytes)}`],
    ['slots free', `${st.slotsFree} of ${st.slotsTotal}`], ['uploading / serving', `${st.uploading} / ${st.serving}`],
    ['uploads', `${st.uploads} (${bytes(st.uploadBytes)})`], ['serves', `${st.serves} (${bytes(st.serveBytes)})`],
    ['refused', st.refused], ['evicted', st.evicted],
  ], [0, 1]);
  const expired = Object.entries(st.expiredByNamespace || {});
  fill($('#expired tbody'), expired.length ? expired : [['none', '']], [0, 1]);
  fill($('#members tbody'), s.cluster.members, [(m) => m.address + (m.self ? ' (this manager)' : ''),
    (m) => m.roles.join(', '), 'status', (m) => m.reachable ? 'yes' : 'NO']);
  document.body.dataset.members = String(s.cluster.members.length);
  $('#cluster-line').textContent = `leader ${s.cluster.leader || 'none'}, ${s.cluster.unreachable} unreachable`;
}

async function tick() {
  try {
    await refresh();
  } catch (e) {
    $('#node-line').textContent = 'cannot reach the manager: ' + e.message;
  }
}

tick();
setInterval(tick, 2000);
