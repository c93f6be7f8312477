// A web page that watches one agent run live and lets a person approve or
// reject its parked call: a small HTTP server bridging the run's live stream
// (AgentRunHandle.events) to server-sent events, the way a team's own web app
// would. Only the package's public client entry is used.
//
//   GET  /?run=WORKFLOW_ID     the page
//   GET  /events?run=ID        the stream as server-sent events: `id:` is the
//                              item's offset, so a browser that reconnects
//                              (EventSource does, with Last-Event-ID) resumes
//                              where it was; `event: end` after run_stopped
//   POST /decide               {run, callId, decision: approve|reject, by, reason?}
//
// An example, not a product: there is no login here, and anyone who reaches the
// port may decide. A deployment puts it behind its own authentication, and with
// AGENT_APPROVERS set decisions must also be signed (docs/security.md).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentClient } from '../../client/index.js';

export interface LivePage {
  url: string;
  close(): Promise<void>;
}

/** Serves the page on `port` (0: any free port) for the runs `agents` reaches. */
export async function startLivePage(agents: AgentClient, port = 0): Promise<LivePage> {
  const server: Server = createServer((req, res) => {
    void route(agents, req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function route(agents: AgentClient, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://page');
  if (req.method === 'GET' && url.pathname === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
    return;
  }
  if (req.method === 'GET' && url.pathname === '/events') return events(agents, url, req, res);
  if (req.method === 'POST' && url.pathname === '/decide') return decide(agents, req, res);
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('not found');
}

async function events(agents: AgentClient, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const run = url.searchParams.get('run');
  if (!run) {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('?run=WORKFLOW_ID is required');
    return;
  }
  // A reconnecting EventSource says the last offset it had.
  const last = Number(req.headers['last-event-id'] ?? url.searchParams.get('from') ?? -1);
  const from = Number.isInteger(last) && last >= 0 ? last + 1 : 0;
  const handle = agents.getHandle(run);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let open = true;
  req.on('close', () => (open = false));
  for await (const item of handle.events(from)) {
    if (!open) return;
    res.write(`id: ${item.offset}\ndata: ${JSON.stringify(item)}\n\n`);
  }
  res.write('event: end\ndata: {}\n\n');
  res.end();
}

async function decide(agents: AgentClient, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 16_384) throw new Error('request body over 16 KiB');
  }
  const d = JSON.parse(body) as { run?: unknown; callId?: unknown; decision?: unknown; by?: unknown; reason?: unknown };
  if (typeof d.run !== 'string' || typeof d.callId !== 'string' || (d.decision !== 'approve' && d.decision !== 'reject')) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'expected {run, callId, decision: "approve" | "reject", by}' }));
    return;
  }
  const by = typeof d.by === 'string' && d.by !== '' ? d.by : 'live-page';
  const handle = agents.getHandle(d.run);
  const reason = typeof d.reason === 'string' ? d.reason : undefined;
  const status = d.decision === 'approve' ? await handle.approve(d.callId, { by }) : await handle.reject(d.callId, { by, ...(reason ? { reason } : {}) });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: true, status: status.status }));
}

// Kept in this file so the example is one module; what the page does with
// each item mirrors what `agent-harness follow` prints. Text from the run is
// set with textContent, never as HTML.
const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>Agent run</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; max-width: 60rem; }
  #reply { white-space: pre-wrap; background: #f4f4f4; padding: .75rem; min-height: 2rem; }
  #events li { font-family: ui-monospace, monospace; font-size: 12px; }
  #decision[hidden] { display: none; }
  .ended { color: #555; }
</style>
<h1>Run <span id="run"></span> <small id="status">connecting…</small></h1>
<section id="decision" hidden>
  <p>Approval required: <code id="call"></code></p>
  <button id="approve">Approve</button>
  <input id="reason" placeholder="reason for a rejection">
  <button id="reject">Reject</button>
</section>
<h2>Reply</h2>
<div id="reply" data-tokens="0"></div>
<h2>Events</h2>
<ol id="events"></ol>
<script>
  const run = new URLSearchParams(location.search).get('run');
  const $ = (id) => document.getElementById(id);
  $('run').textContent = run;
  let parked = null;
  let attemptText = '';
  const line = (text) => { const li = document.createElement('li'); li.textContent = text; $('events').append(li); };
  const source = new EventSource('/events?run=' + encodeURIComponent(run));
  source.onopen = () => { $('status').textContent = 'live'; };
  source.addEventListener('end', () => { source.close(); document.body.classList.add('ended'); });
  source.onmessage = (m) => {
    const e = JSON.parse(m.data);
    if (e.type === 'token') {
      // A new turn's reply replaces the last one's.
      if ($('reply').dataset.turn !== String(e.turn) + '.' + e.attempt) { $('reply').dataset.turn = String(e.turn) + '.' + e.attempt; attemptText = ''; }
      attemptText += e.text;
      $('reply').textContent = attemptText;
      $('reply').dataset.tokens = String(Number($('reply').dataset.tokens) + 1);
      return;
    }
    if (e.type === 'token_end') {
      if (e.outcome === 'failed') line('attempt ' + e.attempt + ' of turn ' + e.turn + ' failed: its text is dropped');
      return;
    }
    if (e.type === 'approval_required') {
      parked = e.callId;
      $('call').textContent = e.toolName + ' ' + JSON.stringify(e.args) + ' (call ' + e.callId + ')';
      $('decision').hidden = false;
    }
    if (e.type === 'approval_decided') $('decision').hidden = true;
    if (e.type === 'run_stopped') $('status').textContent = e.status;
    line('#' + e.offset + ' ' + e.type + (e.toolName ? ' ' + e.toolName : '') + (e.label ? ' ' + e.label : ''));
  };
  const decide = async (decision) => {
    const r = await fetch('/decide', { method: 'POST', body: JSON.stringify({ run, callId: parked, decision, by: 'live-page', reason: $('reason').value }) });
    if (!r.ok) line('decision refused: ' + (await r.text()));
  };
  $('approve').onclick = () => decide('approve');
  $('reject').onclick = () => decide('reject');
</script>
</html>
`;
