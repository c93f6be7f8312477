// The ops server (`agent-harness ops`): an inbox of every run parked on a
// person across the namespace, a JSON API to read and decide them, and the
// record of decisions taken. It keeps no state of its own (everything is read
// from Temporal: visibility for the list, the status query and the live stream
// for one run, histories for the audit) and holds no approver key: a decision
// is forwarded as the run's `decide` update exactly as the caller sent it, so
// with AGENT_APPROVERS the run's validator takes only what a listed key
// signed in the browser (client/ops-page.ts) and this server cannot decide by
// itself.
//
// Who may call it: every /api/ request carries `Authorization: Bearer
// <AGENT_OPS_TOKEN>` (compared as digests, in constant time); a request whose
// Origin is not this server's own is refused (403), and no CORS header is ever
// sent, so another site's page can neither read nor post. Request bodies are
// bounded (maxBodyBytes, maxBatch), answered 413 naming the limit.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunStatusView } from '../common/contract.js';
import { bearerCheck } from '../node/bearer-token.js';
import { decideUpdate, type DecideInput } from '../common/run-messages.js';
import type { ApproverPolicy } from '../common/signed-decision.js';
import { AgentClient, PARKED_ON_A_PERSON } from './agent-client.js';
import { auditCsv, auditDecisions, auditJsonl, parseTimeBound } from './ops-audit.js';
import { OPS_PAGE, OPS_PAGE_CSP } from './ops-page.js';
import { boundedAnswer, queueWorkers, type QueueWorkers } from './worker-check.js';

/** 1 MiB: a decision is a few hundred bytes; a batch of 500 signed ones is under 300 KiB. */
export const DEFAULT_OPS_MAX_BODY_BYTES = 1024 * 1024;
/** The most decisions one batch may carry: each is an update to a run, sent from here. */
export const DEFAULT_OPS_MAX_BATCH = 500;
/** The most runs one page of /api/awaiting lists. */
export const MAX_AWAITING_PAGE = 1000;
/** Temporal's own limit on a workflow id's length (bytes). */
const MAX_WORKFLOW_ID_BYTES = 1000;
/** Decisions of one batch sent at once. */
const BATCH_PARALLEL = 16;

/** How the ops server runs. */
export interface OpsServerOptions {
  /** A client on the runs' namespace with the harness's data converter (AGENT_PAYLOAD_KEYS): arguments are shown decoded. */
  client: Client;
  /** The bearer token every /api/ request must carry (AGENT_OPS_TOKEN). Required, non-empty. */
  token: string;
  /** The approvers policy (read-only public keys), to say who may approve a parked call and to filter by approver. */
  approvers?: ApproverPolicy | null;
  /** The origin browsers reach this server by when it is not its bound address (behind a proxy): OPS_PUBLIC_URL. */
  publicUrl?: string | null;
  /** The largest request body read, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** The most decisions one batch may carry (default 500). */
  maxBatch?: number;
  /** How long a decision waits for the run's answer, in ms (default 20 000). */
  answerTimeoutMs?: number;
}

/** A started ops server. */
export interface OpsServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** One run parked on a person, as /api/awaiting lists it. */
export interface AwaitingItem {
  workflowId: string;
  /** The parked call; null for a run parked on its budget. */
  callId: string | null;
  toolName: string | null;
  argsHash: string | null;
  /** When the wait times out (ISO-8601); null: no timeout. */
  expiresAt: string | null;
  /** When it parked (ISO-8601); null for a run of a worker before AgentAwaitingSince. */
  parkedAt: string | null;
  /** `awaiting_approval`, `awaiting_budget` or `awaiting_reconciliation`. */
  agentStatus: string;
  /** Who may approve it (AGENT_APPROVERS); null: the server has no policy, or the tool is not listed (decided unsigned). */
  approvers: string[] | null;
  runId: string;
  taskQueue: string;
}

/** An HTTP answer with a status and a JSON body `{error}`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const quote = (v: string) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** Starts the ops server on `host:port` (port 0: any free port). Throws naming AGENT_OPS_TOKEN when no token is given. */
export async function startOpsServer(port: number, host: string, opts: OpsServerOptions): Promise<OpsServer> {
  if (typeof opts.token !== 'string' || opts.token.trim() === '') throw new Error('AGENT_OPS_TOKEN is required: the ops server answers only requests with Authorization: Bearer <AGENT_OPS_TOKEN>');
  const tokenCheck = bearerCheck(opts.token.trim());
  const maxBody = opts.maxBodyBytes ?? DEFAULT_OPS_MAX_BODY_BYTES;
  const maxBatch = opts.maxBatch ?? DEFAULT_OPS_MAX_BATCH;
  const ctx: Ctx = {
    client: opts.client,
    agents: new AgentClient({ client: opts.client, ...(opts.answerTimeoutMs !== undefined ? { answerTimeoutMs: opts.answerTimeoutMs } : {}) }),
    policy: opts.approvers ?? null,
    answerTimeoutMs: opts.answerTimeoutMs ?? 20_000,
    workers: new Map(),
  };
  const origins = new Set<string>();
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      // Our own refusals name what is wrong; anything else is said in one line, never a stack.
      const message = err instanceof HttpError ? err.message : `internal error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      // A body over the limit is not read to its end: the connection closes after the answer, so a client does not send on it again.
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...(status === 413 ? { connection: 'close' } : {}) });
      res.end(JSON.stringify({ error: message }), () => {
        if (status === 413) req.destroy();
      });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
    // A browser says where a request comes from; only this server's own page may call it (no CORS, no preflight answered).
    if (origin !== null && !origins.has(origin)) {
      req.resume();
      throw new HttpError(403, `origin ${origin.slice(0, 200)} is not this server's (${[...origins].join(', ')}): cross-origin requests are refused (set OPS_PUBLIC_URL to the address browsers use)`);
    }
    if (req.method === 'POST' && origin === null && req.headers['sec-fetch-site'] === 'cross-site') throw new HttpError(403, 'cross-site requests are refused');
    const raw = req.url ?? '/';
    const path = raw.split('?')[0];
    if (req.method === 'GET' && (path === '/' || path === '/index.html')) {
      // The page is static and carries no data: it asks for the token, then calls the API with it.
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': OPS_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
        'cache-control': 'no-store',
      });
      res.end(OPS_PAGE);
      return;
    }
    if (!path.startsWith('/api/')) throw new HttpError(404, `no such page ${JSON.stringify(path.slice(0, 200))}: the inbox is at /, the API under /api/`);
    authorize(req);
    const url = new URL(raw, 'http://ops.invalid');
    if (req.method === 'GET' && path === '/api/awaiting') return json(res, 200, ...(await awaiting(ctx, url)));
    if (req.method === 'GET' && path === '/api/audit') return audit(ctx, url, res);
    if (req.method === 'POST' && path === '/api/decide') return batch(ctx, await readJson(req, maxBody), maxBatch, res);
    const m = /^\/api\/runs\/([^/]+)(\/events|\/decide)?$/.exec(path);
    if (m) {
      const workflowId = workflowIdOf(m[1]);
      if (req.method === 'GET' && m[2] === undefined) return json(res, 200, await runView(ctx, workflowId));
      if (req.method === 'GET' && m[2] === '/events') return events(ctx, workflowId, url, req, res);
      if (req.method === 'POST' && m[2] === '/decide') {
        const answer = await forward(ctx, workflowId, await readJson(req, maxBody));
        return json(res, answer.ok ? 200 : answer.code, answer.ok ? answer.answer : { error: answer.error });
      }
    }
    throw new HttpError(req.method === 'GET' || req.method === 'POST' ? 404 : 405, `no route ${req.method ?? ''} ${path.slice(0, 200)}`);
  }

  function authorize(req: IncomingMessage): void {
    const problem = tokenCheck(req.headers.authorization);
    if (problem === 'missing') {
      req.resume();
      throw new HttpError(401, 'missing bearer token: send Authorization: Bearer <AGENT_OPS_TOKEN>');
    }
    if (problem === 'wrong') {
      req.resume();
      throw new HttpError(401, 'wrong bearer token');
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${bound}`;
  origins.add(url);
  if (host === '127.0.0.1' || host === 'localhost' || host === '::1') for (const h of ['127.0.0.1', 'localhost', '[::1]']) origins.add(`http://${h}:${bound}`);
  if (opts.publicUrl) origins.add(new URL(opts.publicUrl).origin);
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Ctx {
  client: Client;
  agents: AgentClient;
  policy: ApproverPolicy | null;
  answerTimeoutMs: number;
  /** Who polls a task queue, asked at most once a second per queue (a batch of 500 decisions mostly shares one queue). */
  workers: Map<string, { at: number; answer: Promise<QueueWorkers> }>;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** A workflow id from its path segment: percent-decoded, non-empty, at most Temporal's 1000 bytes, no control characters. */
function workflowIdOf(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'workflowId in the path is not valid percent-encoding');
  }
  if (id === '' || Buffer.byteLength(id) > MAX_WORKFLOW_ID_BYTES) throw new HttpError(400, `workflowId must be 1 to ${MAX_WORKFLOW_ID_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f]/.test(id)) throw new HttpError(400, 'workflowId must not contain control characters');
  return id;
}

/** The body as JSON, read up to the cap: over it (declared or streamed), 413 naming the cap. */
async function readJson(req: IncomingMessage, maxBody: number): Promise<unknown> {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type)) {
    req.resume();
    throw new HttpError(415, 'send the body as Content-Type: application/json');
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBody) throw new HttpError(413, `request body of ${declared} bytes is over the ${maxBody}-byte limit`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBody) throw new HttpError(413, `request body is over the ${maxBody}-byte limit`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'request body is not JSON');
  }
}

/** Who may decide a parked call of this tool (or a budget raise); null when the policy does not list it. */
function approversFor(policy: ApproverPolicy | null, toolName: string | null, agentStatus: string): string[] | null {
  if (!policy) return null;
  if (agentStatus === 'awaiting_budget') return policy.decisions?.raiseBudget ?? null;
  if (agentStatus === 'awaiting_reconciliation') return policy.decisions?.reconcile ?? null;
  return toolName !== null && Object.hasOwn(policy.tools, toolName) ? (policy.tools[toolName] ?? []) : null;
}

/** `GET /api/awaiting`: one page of parked runs, filtered; the next page's token in X-Next-Page-Token. */
async function awaiting(ctx: Ctx, url: URL): Promise<[AwaitingItem[], Record<string, string>]> {
  const q = url.searchParams;
  const limitText = q.get('limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_AWAITING_PAGE) throw new HttpError(400, `limit must be a whole number from 1 to ${MAX_AWAITING_PAGE}, got ${JSON.stringify(limitText.slice(0, 32))}`);
  const clauses = [`WorkflowType = 'agentRun'`, `ExecutionStatus = 'Running'`, `AgentStatus IN (${PARKED_ON_A_PERSON.map(quote).join(', ')})`];
  const tool = q.get('tool');
  if (tool !== null) {
    if (tool === '' || tool.length > 256) throw new HttpError(400, 'tool must be 1 to 256 characters');
    clauses.push(`AgentAwaitingTool = ${quote(tool)}`);
  }
  const minAge = q.get('minAgeMs');
  if (minAge !== null) {
    if (!/^\d+$/.test(minAge) || !Number.isSafeInteger(Number(minAge))) throw new HttpError(400, `minAgeMs must be a whole number of milliseconds, got ${JSON.stringify(minAge.slice(0, 32))}`);
    clauses.push(`AgentAwaitingSince <= '${new Date(Date.now() - Number(minAge)).toISOString()}'`);
  }
  const queue = q.get('taskQueue');
  if (queue !== null) clauses.push(`TaskQueue = ${quote(queue.slice(0, 1000))}`);
  const approver = q.get('approver');
  if (approver !== null) {
    if (!ctx.policy) throw new HttpError(400, 'approver filters need the approvers policy: start the server with AGENT_APPROVERS (or --approvers FILE)');
    const tools = Object.entries(ctx.policy.tools)
      .filter(([, who]) => who.includes(approver))
      .map(([t]) => t);
    const alts = tools.length > 0 ? [`AgentAwaitingTool IN (${tools.map(quote).join(', ')})`] : [];
    if (ctx.policy.decisions?.raiseBudget?.includes(approver)) alts.push(`AgentStatus = 'awaiting_budget'`);
    if (alts.length === 0) return [[], {}];
    clauses.push(`(${alts.join(' OR ')})`);
  }
  const pageToken = q.get('pageToken');
  let nextPageToken: Uint8Array | undefined;
  if (pageToken !== null && pageToken !== '') {
    if (!/^[A-Za-z0-9_-]+$/.test(pageToken) || pageToken.length > 4096) throw new HttpError(400, 'pageToken is not one this server gave (X-Next-Page-Token)');
    nextPageToken = Buffer.from(pageToken, 'base64url');
  }
  let resp;
  try {
    resp = await ctx.client.workflowService.listWorkflowExecutions({ namespace: ctx.client.options.namespace, query: clauses.join(' AND '), pageSize: limit, nextPageToken });
  } catch (err) {
    if (nextPageToken) throw new HttpError(400, `pageToken refused by the server: ${(err as Error).message.split('\n')[0]}`);
    throw err;
  }
  const items: AwaitingItem[] = (resp.executions ?? []).map((w) => {
    const sa = decodeSearchAttributes(w.searchAttributes?.indexedFields);
    const str = (k: string) => {
      const v = sa[k]?.[0];
      return v === undefined || v === null || v === '' ? null : v instanceof Date ? v.toISOString() : String(v);
    };
    const agentStatus = str('AgentStatus') ?? 'awaiting_approval';
    const toolName = str('AgentAwaitingTool');
    return {
      workflowId: w.execution?.workflowId ?? '',
      callId: str('AgentAwaitingCallId'),
      toolName,
      argsHash: str('AgentPendingArgsHash'),
      expiresAt: str('AgentAwaitingExpiresAt'),
      parkedAt: str('AgentAwaitingSince'),
      agentStatus,
      approvers: approversFor(ctx.policy, toolName, agentStatus),
      runId: w.execution?.runId ?? '',
      taskQueue: w.taskQueue ?? '',
    };
  });
  const next = resp.nextPageToken && resp.nextPageToken.length > 0 ? Buffer.from(resp.nextPageToken).toString('base64url') : null;
  return [items, next ? { 'x-next-page-token': next } : {}];
}

/** `GET /api/runs/{id}`: the parked call and its arguments, decoded, the time left, the run's status. */
async function runView(ctx: Ctx, workflowId: string): Promise<Record<string, unknown>> {
  const d = await described(ctx, workflowId);
  const sa = d.searchAttributes;
  const at = (k: string) => {
    const v = sa[k]?.[0];
    return v instanceof Date ? v.toISOString() : typeof v === 'string' && v !== '' ? v : null;
  };
  let status: RunStatusView | null = null;
  let statusError: string | null = null;
  if (d.status.name === 'RUNNING') {
    try {
      status = await ctx.agents.getHandle(workflowId).status();
    } catch (err) {
      statusError = err instanceof Error ? err.message : String(err);
    }
  }
  const expiresAt = at('AgentAwaitingExpiresAt');
  const i = status?.interruption ?? null;
  const agentStatus = status?.agentStatus ?? (typeof sa.AgentStatus?.[0] === 'string' ? sa.AgentStatus[0] : null);
  const toolName = i && 'toolName' in i ? i.toolName : null;
  return {
    workflowId,
    runId: d.runId,
    temporalStatus: d.status.name,
    agentStatus,
    // What a signed decision binds (client/signing.ts signCall): callId, callKey, toolName, argsHash.
    call: i && (i.type === 'approval' || i.type === 'reconciliation') ? { callId: i.callId, toolName: i.toolName, args: i.args, argsHash: 'argsHash' in i ? i.argsHash : null, callKey: i.callKey ?? null } : null,
    interruption: i,
    parkedAt: at('AgentAwaitingSince'),
    expiresAt,
    timeLeftMs: expiresAt === null ? null : Math.max(0, Date.parse(expiresAt) - Date.now()),
    approvers: approversFor(ctx.policy, toolName, agentStatus ?? ''),
    status,
    statusError,
  };
}

async function described(ctx: Ctx, workflowId: string) {
  try {
    const d = await ctx.client.workflow.getHandle(workflowId).describe();
    if (d.type !== 'agentRun') throw new HttpError(404, `${JSON.stringify(workflowId)} is a ${d.type} workflow, not an agentRun`);
    return d;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new HttpError(404, `no run ${JSON.stringify(workflowId)} in namespace ${ctx.client.options.namespace}`);
    throw err;
  }
}

/** `GET /api/runs/{id}/events`: the run's live stream as server-sent events (`id:` the offset; Last-Event-ID or ?from resumes). */
async function events(ctx: Ctx, workflowId: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  await described(ctx, workflowId);
  const last = Number(req.headers['last-event-id'] ?? NaN);
  const fromText = url.searchParams.get('from');
  const from = Number.isSafeInteger(last) && last >= 0 ? last + 1 : fromText !== null && /^\d+$/.test(fromText) ? Number(fromText) : 0;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
  let open = true;
  req.on('close', () => (open = false));
  try {
    for await (const item of ctx.agents.getHandle(workflowId).events(from)) {
      if (!open) return;
      res.write(`id: ${item.offset}\ndata: ${JSON.stringify(item)}\n\n`);
    }
    res.write('event: end\ndata: {}\n\n');
  } catch (err) {
    // Headers are sent: the failure is an event the page shows.
    if (open) res.write(`event: error\ndata: ${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n\n`);
  }
  res.end();
}

type Forwarded = { ok: true; answer: RunStatusView } | { ok: false; code: number; error: string };

/** A decide update's body as the contract has it; the message names the first field at fault. */
function decideProblem(body: unknown, where: string): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `${where} must be a JSON object: the decide update's body {callId, decision, by, signature, ...}`;
  const b = body as Record<string, unknown>;
  if (typeof b.callId !== 'string' || b.callId === '') return `${where}.callId must be a non-empty string`;
  if (b.decision !== 'approve' && b.decision !== 'reject') return `${where}.decision must be "approve" or "reject"`;
  for (const f of ['by', 'reason', 'argsHash', 'signature', 'expiresAt', 'workflowId', 'callKey', 'toolName']) {
    if (b[f] !== undefined && typeof b[f] !== 'string') return `${where}.${f} must be a string`;
  }
  return null;
}

/**
 * Sends the decision to the run as its `decide` update, unchanged: the run's
 * validator decides (a signature for another run, a replayed one, an
 * unsigned one for a listed tool are refused there, with the reason).
 */
async function forward(ctx: Ctx, workflowId: string, body: unknown): Promise<Forwarded> {
  const problem = decideProblem(body, 'body');
  if (problem) return { ok: false, code: 400, error: problem };
  const input = body as DecideInput;
  let d;
  try {
    d = await described(ctx, workflowId);
  } catch (err) {
    if (err instanceof HttpError) return { ok: false, code: err.status, error: err.message };
    throw err;
  }
  if (d.status.name !== 'RUNNING') return { ok: false, code: 409, error: `run ${JSON.stringify(workflowId)} has ended (${d.status.name}): there is nothing to decide` };
  const workers = await queueWorkersCached(ctx, d.taskQueue);
  // An update the server held for a worker that comes back later would apply unseen: not sent, and said so.
  if (!workers.polling) return { ok: false, code: 503, error: `no worker polls task queue ${d.taskQueue}: the decision is not sent (start a worker, then decide again)` };
  try {
    const answer = await boundedAnswer(ctx.client, ctx.answerTimeoutMs, () => ctx.client.workflow.getHandle(workflowId).executeUpdate(decideUpdate, { args: [input] }));
    if (answer === 'no-answer') return { ok: false, code: 504, error: `no answer from the run within ${ctx.answerTimeoutMs} ms: the decision may still apply (see the run's status)` };
    return { ok: true, answer };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause;
      const type = cause instanceof ApplicationFailure ? (cause.type ?? 'ApplicationFailure') : 'UpdateFailed';
      return { ok: false, code: 409, error: `decision refused by the run: ${cause?.message ?? err.message}${type === 'DecisionRefused' ? ' (refused as it was applied)' : ''}` };
    }
    if (err instanceof WorkflowNotFoundError) return { ok: false, code: 409, error: `run ${JSON.stringify(workflowId)} has ended: there is nothing to decide` };
    throw err;
  }
}

function queueWorkersCached(ctx: Ctx, taskQueue: string): Promise<QueueWorkers> {
  const now = Date.now();
  const known = ctx.workers.get(taskQueue);
  if (known && now - known.at < 1000) return known.answer;
  const answer = queueWorkers(ctx.client, taskQueue);
  ctx.workers.set(taskQueue, { at: now, answer });
  answer.catch(() => ctx.workers.delete(taskQueue));
  return answer;
}

/** `POST /api/decide`: an array of `{workflowId, ...decide body}`, each forwarded; answered entry by entry, in order. */
async function batch(ctx: Ctx, body: unknown, maxBatch: number, res: ServerResponse): Promise<void> {
  if (!Array.isArray(body)) throw new HttpError(400, 'body must be a JSON array of decisions: [{workflowId, callId, decision, by, signature, ...}]');
  if (body.length > maxBatch) throw new HttpError(413, `a batch of ${body.length} decisions is over the limit of ${maxBatch} decisions a batch`);
  const out: (Forwarded & { workflowId: string | null; callId: string | null })[] = new Array(body.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < body.length; i = next++) {
      const entry = body[i] as Record<string, unknown>;
      const wid = typeof entry === 'object' && entry !== null && typeof entry.workflowId === 'string' ? entry.workflowId : null;
      const callId = typeof entry === 'object' && entry !== null && typeof entry.callId === 'string' ? entry.callId : null;
      if (wid === null) {
        out[i] = { ok: false, code: 400, error: `[${i}].workflowId must be a string naming the run`, workflowId: null, callId };
        continue;
      }
      try {
        workflowIdOf(encodeURIComponent(wid));
        const problem = decideProblem(entry, `[${i}]`);
        out[i] = problem ? { ok: false, code: 400, error: problem, workflowId: wid, callId } : { ...(await forward(ctx, wid, entry)), workflowId: wid, callId };
      } catch (err) {
        out[i] = { ok: false, code: err instanceof HttpError ? err.status : 500, error: err instanceof Error ? err.message.split('\n')[0] : String(err), workflowId: wid, callId };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_PARALLEL, body.length) }, worker));
  json(res, 200, out);
}

/** `GET /api/audit?from=&to=&format=jsonl|csv`: every decision taken in the range (default: the last 24 hours). */
async function audit(ctx: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const q = url.searchParams;
  const format = q.get('format') ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new HttpError(400, `format must be jsonl or csv, got ${JSON.stringify(format.slice(0, 32))}`);
  let from: Date;
  let to: Date;
  try {
    to = q.get('to') === null ? new Date() : parseTimeBound(q.get('to') ?? '', 'to');
    from = q.get('from') === null ? new Date(to.getTime() - 86_400_000) : parseTimeBound(q.get('from') ?? '', 'from');
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  if (from.getTime() > to.getTime()) throw new HttpError(400, `from (${from.toISOString()}) is after to (${to.toISOString()})`);
  const taskQueue = q.get('taskQueue');
  const lines = await auditDecisions(ctx.client, { from, to }, taskQueue !== null ? { taskQueue } : {});
  res.writeHead(200, { 'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson', 'cache-control': 'no-store' });
  res.end(format === 'csv' ? auditCsv(lines) : auditJsonl(lines));
}
