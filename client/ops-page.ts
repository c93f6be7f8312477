// The inbox page the ops server serves at `/`: one static HTML file with its
// script, no framework. It lists the runs parked on a person (polling
// /api/awaiting), shows a run's call, its decoded arguments, time left and
// live stream, and decides. The approver's Ed25519 private key (the file
// `agent-harness keygen` wrote: base64 of the 32-byte seed) is imported into
// WebCrypto as a non-extractable key: it never leaves the browser, and the
// page signs each decision exactly as client/signing.ts does (canonical JSON
// of argsHash, by, callId, callKey, decision, expiresAt, toolName,
// workflowId: keys sorted, no spaces). The API token is read from the URL's
// fragment (`/#token=…`, never sent to a server) or typed, and kept in this
// tab's sessionStorage. Text from runs is set with textContent, never as HTML.
import { createHash } from 'node:crypto';

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #ddd; font-size: 13px; }
  tr.open { background: #eef4ff; }
  code, pre { font-family: ui-monospace, monospace; font-size: 12px; }
  pre { background: #f4f4f4; padding: .5rem; white-space: pre-wrap; max-height: 20rem; overflow: auto; }
  fieldset { margin: 0 0 1rem; }
  #detail[hidden], .hidden { display: none; }
  .refused { color: #a00; }
  .taken { color: #060; }
`;

const SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
const state = { token: null, key: null, open: null, stream: null, items: new Map(), answers: new Map() };

// The token: from the fragment once (then wiped from the address bar), else this tab's storage.
(function readToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) { sessionStorage.setItem('opsToken', decodeURIComponent(m[1])); history.replaceState(null, '', location.pathname + location.search); }
  state.token = sessionStorage.getItem('opsToken');
  $('token-state').textContent = state.token ? 'token set' : 'no token';
})();
$('set-token').onclick = () => { sessionStorage.setItem('opsToken', $('token').value.trim()); $('token').value = ''; state.token = sessionStorage.getItem('opsToken'); $('token-state').textContent = 'token set'; refresh(); };

const api = async (path, init = {}) => {
  const r = await fetch(path, { ...init, headers: { ...(init.headers || {}), authorization: 'Bearer ' + state.token, ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  return r;
};

// base64 <-> bytes (standard alphabet, padded: what keygen writes and the run reads).
const fromB64 = (t) => Uint8Array.from(atob(t), (c) => c.charCodeAt(0));
const toB64 = (bytes) => { let s = ''; for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b); return btoa(s); };

// A keygen key file: '#' comment lines, then base64 of the 32-byte seed. WebCrypto takes it as PKCS#8 (RFC 8410's fixed prefix + seed).
async function importKey(text) {
  const body = text.split('\\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).join('');
  let seed;
  try { seed = fromB64(body); } catch { throw new Error('the key is not base64 (paste the file agent-harness keygen wrote)'); }
  if (seed.length !== 32) throw new Error('the key is not a 32-byte Ed25519 private key (paste the file agent-harness keygen wrote)');
  const der = new Uint8Array(48);
  der.set([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
  der.set(seed, 16);
  seed.fill(0);
  return crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']);
}

$('import-key').onclick = async () => {
  try {
    state.key = await importKey($('key').value);
    $('key').value = '';
    $('key-state').textContent = 'key imported for ' + ($('by').value || '(name it in "by")') + ': it stays in this page';
    $('key-state').className = 'taken';
  } catch (e) {
    state.key = null;
    $('key-state').textContent = String(e.message || e);
    $('key-state').className = 'refused';
  }
};

// The signed message: canonical JSON (keys sorted, no spaces) of the eight signed fields, as common/signed-decision.ts signedMessage.
const signedText = (f) => '{' + ['argsHash', 'by', 'callId', 'callKey', 'decision', 'expiresAt', 'toolName', 'workflowId'].map((k) => JSON.stringify(k) + ':' + JSON.stringify(f[k])).join(',') + '}';

async function decisionFor(workflowId, decision, reason) {
  const r = await api('/api/runs/' + encodeURIComponent(workflowId));
  const view = await r.json();
  if (!r.ok) throw new Error(view.error || r.statusText);
  const call = view.call;
  if (!call) throw new Error('not parked on a call' + (view.statusError ? ': ' + view.statusError : ''));
  const by = $('by').value.trim();
  const body = { workflowId, callId: call.callId, decision, by: by || 'ops-inbox' };
  if (reason) body.reason = reason;
  if (state.key) {
    if (!by) throw new Error('name the approver in "by" (as AGENT_APPROVERS lists the key)');
    const fields = { argsHash: String(call.argsHash || '').toLowerCase(), by, callId: call.callId, callKey: call.callKey || '', decision, expiresAt: new Date(Date.now() + 10 * 60000).toISOString(), toolName: call.toolName, workflowId };
    const sig = await crypto.subtle.sign({ name: 'Ed25519' }, state.key, new TextEncoder().encode(signedText(fields)));
    Object.assign(body, { argsHash: fields.argsHash, callKey: fields.callKey, toolName: fields.toolName, expiresAt: fields.expiresAt, signature: toB64(sig) });
  }
  return body;
}

function showAnswer(workflowId, ok, text) {
  state.answers.set(workflowId, { ok, text });
  let li = [...$('answers').children].find((x) => x.dataset.workflowId === workflowId);
  if (!li) { li = document.createElement('li'); li.dataset.workflowId = workflowId; $('answers').prepend(li); }
  li.className = ok ? 'taken' : 'refused';
  li.dataset.ok = String(ok);
  li.textContent = workflowId + ': ' + text;
  $('answered').textContent = String([...state.answers.values()].filter((a) => a.ok).length);
}

// Each selected run signed on its own, all sent in one request (POST /api/decide), each answered.
async function decide(ids, decision) {
  const reason = $('reason').value.trim() || undefined;
  $('busy').textContent = 'signing ' + ids.length + '…';
  const bodies = [];
  const queue = [...ids];
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      try { bodies.push(await decisionFor(id, decision, reason)); } catch (e) { showAnswer(id, false, 'not sent: ' + (e.message || e)); }
    }
  }));
  if (bodies.length === 0) { $('busy').textContent = ''; return; }
  $('busy').textContent = 'sending ' + bodies.length + '…';
  const r = await api('/api/decide', { method: 'POST', body: JSON.stringify(bodies) });
  const out = await r.json();
  if (!r.ok) { for (const b of bodies) showAnswer(b.workflowId, false, out.error || r.statusText); $('busy').textContent = ''; return; }
  out.forEach((a, i) => showAnswer(bodies[i].workflowId, a.ok, a.ok ? decision + 'd by ' + bodies[i].by + ' → ' + a.answer.agentStatus : 'refused: ' + a.error));
  $('busy').textContent = '';
  refresh();
}

$('approve-selected').onclick = () => decide(selected(), 'approve');
$('reject-selected').onclick = () => decide(selected(), 'reject');
$('approve').onclick = () => state.open && decide([state.open], 'approve');
$('reject').onclick = () => state.open && decide([state.open], 'reject');
$('select-all').onchange = (e) => { for (const c of document.querySelectorAll('#runs input[type=checkbox]')) c.checked = e.target.checked; };
const selected = () => [...document.querySelectorAll('#runs input[type=checkbox]:checked')].map((c) => c.value);

const left = (iso) => {
  if (!iso) return 'no timeout';
  const ms = Date.parse(iso) - Date.now();
  if (ms <= 0) return 'expired';
  const s = Math.floor(ms / 1000);
  return (s >= 3600 ? Math.floor(s / 3600) + 'h ' : '') + Math.floor((s % 3600) / 60) + 'm ' + (s % 60) + 's';
};

function filters() {
  const p = new URLSearchParams();
  for (const [id, name] of [['f-tool', 'tool'], ['f-approver', 'approver'], ['f-queue', 'taskQueue'], ['f-age', 'minAgeMs']]) if ($(id).value.trim()) p.set(name, $(id).value.trim());
  p.set('limit', '1000');
  return p;
}

// Every page of /api/awaiting (the server pages; the page follows X-Next-Page-Token).
async function refresh() {
  if (!state.token) return;
  const all = [];
  let token = '';
  try {
    for (let pages = 0; pages < 20; pages++) {
      const p = filters();
      if (token) p.set('pageToken', token);
      const r = await api('/api/awaiting?' + p);
      if (!r.ok) { $('list-state').textContent = (await r.json()).error || r.statusText; $('list-state').className = 'refused'; return; }
      all.push(...(await r.json()));
      token = r.headers.get('x-next-page-token') || '';
      if (!token) break;
    }
  } catch (e) { $('list-state').textContent = String(e); return; }
  $('list-state').textContent = all.length + ' parked';
  $('list-state').className = '';
  const checked = new Set(selected());
  const tbody = $('runs');
  tbody.replaceChildren();
  state.items = new Map(all.map((i) => [i.workflowId, i]));
  for (const i of all) {
    const tr = document.createElement('tr');
    tr.dataset.workflowId = i.workflowId;
    if (i.workflowId === state.open) tr.className = 'open';
    const box = document.createElement('input');
    box.type = 'checkbox'; box.value = i.workflowId; box.checked = checked.has(i.workflowId);
    const cells = [box, i.workflowId, i.agentStatus.replace('awaiting_', ''), i.toolName || '', i.callId || '', left(i.expiresAt), i.approvers ? i.approvers.join(', ') : 'anyone (unsigned)'];
    for (const c of cells) { const td = document.createElement('td'); if (typeof c === 'string') td.textContent = c; else td.append(c); tr.append(td); }
    tr.children[1].className = 'wid';
    tr.children[5].dataset.expiresAt = i.expiresAt || '';
    tr.children[5].className = 'left';
    tr.children[1].onclick = () => openRun(i.workflowId);
    tr.children[1].style.cursor = 'pointer';
    tbody.append(tr);
  }
}

// One run: its call and decoded arguments, time left, and its live stream (server-sent events read with fetch: the token goes in a header).
async function openRun(workflowId) {
  state.open = workflowId;
  if (state.stream) state.stream.abort();
  $('detail').hidden = false;
  $('d-run').textContent = workflowId;
  $('d-status').textContent = '…';
  $('d-call').textContent = '';
  $('d-args').textContent = '';
  $('events').replaceChildren();
  const r = await api('/api/runs/' + encodeURIComponent(workflowId));
  const v = await r.json();
  if (!r.ok) { $('d-status').textContent = v.error; return; }
  $('d-status').textContent = v.agentStatus || v.temporalStatus;
  $('d-call').textContent = v.call ? v.call.toolName + ' (call ' + v.call.callId + ', argsHash ' + v.call.argsHash + ')' : (v.statusError || 'not parked on a call');
  $('d-args').textContent = v.call ? JSON.stringify(v.call.args, null, 2) : '';
  $('d-left').dataset.expiresAt = v.expiresAt || '';
  $('d-left').textContent = left(v.expiresAt);
  const abort = new AbortController();
  state.stream = abort;
  try {
    const s = await fetch('/api/runs/' + encodeURIComponent(workflowId) + '/events', { headers: { authorization: 'Bearer ' + state.token }, signal: abort.signal });
    const reader = s.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let cut;
      while ((cut = buf.indexOf('\\n\\n')) >= 0) {
        const block = buf.slice(0, cut); buf = buf.slice(cut + 2);
        const kind = (/^event: (.*)$/m.exec(block) || [])[1] || 'message';
        const data = (/^data: (.*)$/m.exec(block) || [])[1];
        if (kind === 'end') { $('d-status').textContent = $('d-status').textContent; continue; }
        if (kind === 'error') { const li = document.createElement('li'); li.className = 'refused'; li.textContent = JSON.parse(data).error; $('events').append(li); continue; }
        const e = JSON.parse(data);
        if (e.type === 'token' || e.type === 'token_end') continue;
        const li = document.createElement('li');
        li.textContent = '#' + e.offset + ' ' + e.type + (e.toolName ? ' ' + e.toolName : '') + (e.status ? ' ' + e.status : '');
        $('events').append(li);
        if (e.type === 'run_stopped') $('d-status').textContent = e.status;
        else if (e.type === 'approval_decided') $('d-status').textContent = 'running';
      }
    }
  } catch (e) { if (!abort.signal.aborted) { const li = document.createElement('li'); li.textContent = String(e); $('events').append(li); } }
}

for (const id of ['f-tool', 'f-approver', 'f-queue', 'f-age']) $(id).onchange = refresh;
// Filters may come in the page's query string (?tool=delete_file&taskQueue=…).
for (const [k, v] of new URLSearchParams(location.search)) { const el = $({ tool: 'f-tool', approver: 'f-approver', taskQueue: 'f-queue', minAgeMs: 'f-age' }[k]); if (el) el.value = v; }
setInterval(() => { for (const el of document.querySelectorAll('[data-expires-at]')) el.textContent = left(el.dataset.expiresAt); }, 1000);
let polling = false;
setInterval(async () => { if (polling) return; polling = true; try { await refresh(); } finally { polling = false; } }, 2000);
refresh();
`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's Content-Security-Policy: its own script and style only (by hash), calls to its own origin only, never framed. */
export const OPS_PAGE_CSP = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src ${hash(STYLE)}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** The inbox page. */
export const OPS_PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>Agent runs awaiting a person</title>
<style>${STYLE}</style>
<h1>Awaiting a person <small id="list-state"></small></h1>
<fieldset>
  <legend>Who decides</legend>
  <label>API token <input id="token" type="password" autocomplete="off"></label> <button id="set-token">Use token</button> <span id="token-state"></span><br>
  <label>by <input id="by" placeholder="alice" autocomplete="off"></label>
  <label>private key <textarea id="key" rows="2" cols="50" placeholder="paste the file agent-harness keygen wrote: it stays in this page" autocomplete="off"></textarea></label>
  <button id="import-key">Import key</button> <span id="key-state">no key: decisions go unsigned</span>
</fieldset>
<fieldset>
  <legend>Filter</legend>
  <label>tool <input id="f-tool"></label> <label>approver <input id="f-approver"></label>
  <label>task queue <input id="f-queue"></label> <label>parked at least (ms) <input id="f-age" size="8"></label>
</fieldset>
<p>
  <button id="approve-selected">Approve selected</button> <button id="reject-selected">Reject selected</button>
  <input id="reason" placeholder="reason for a rejection"> <span id="busy"></span>
  decided: <span id="answered">0</span>
</p>
<table>
  <thead><tr><th><input type="checkbox" id="select-all"></th><th>run</th><th>awaiting</th><th>tool</th><th>call</th><th>time left</th><th>who may decide</th></tr></thead>
  <tbody id="runs"></tbody>
</table>
<section id="detail" hidden>
  <h2>Run <code id="d-run"></code>: <span id="d-status"></span></h2>
  <p>Call: <code id="d-call"></code> · time left: <span id="d-left"></span></p>
  <pre id="d-args"></pre>
  <button id="approve">Approve</button> <button id="reject">Reject</button>
  <h3>Live stream</h3>
  <ol id="events"></ol>
</section>
<h2>Answers</h2>
<ul id="answers"></ul>
<script>${SCRIPT}</script>
</html>
`;
