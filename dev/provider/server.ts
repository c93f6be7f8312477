// The scripted provider: an HTTP server shaped like OpenAI's
// POST /v1/chat/completions and Anthropic's POST /v1/messages, each
// unstreamed or streamed (server-sent events), whose replies come from
// dev/provider/scenarios.ts, chosen by the request's `model`. Both protocols
// are converted to one request shape (./requests.ts) and one neutral reply
// (./replies.ts), so the scenarios, faults, log and token counts are shared.
// Stateless except for the test-only fault queue and request log behind /_control.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FaultQueue, isFaultRule, type Fault, type RequestFacts } from './faults.js';
import { SUMMARY_INSTRUCTION } from '../../common/context-window.js';
import { protocolError } from './protocol.js';
import { SCENARIOS, type ScriptedReply, type ScriptInput } from './scenarios.js';
import { answerOf } from './replies.js';
import { requestBodyOf, scriptInputOf, type Protocol, type RequestBody } from './requests.js';
import { logLimitsOf, RequestLog, type RequestLogLimits, type RequestLogStats } from './request-log.js';
import { BROKEN_CHAT_FRAME, chatBody, chatError, chatStreamFrames, parseChatRequest } from './chat.js';
import { anthropicBody, anthropicError, anthropicStreamFrames, BROKEN_ANTHROPIC_FRAME, parseAnthropicRequest } from './anthropic.js';

/** What the scripted provider's /health answers as `service`: another server on its port is not taken for it. */
export const PROVIDER_SERVICE = 'agent-harness-scripted-provider';

export interface ProviderOptions {
  port?: number;
  host?: string;
  /** Fixed delay added to every reply, in ms (the latency knob). */
  latencyMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (chat completions) or `x-api-key: <apiKey>` (Anthropic). */
  apiKey?: string;
  /**
   * Scenarios of the caller's own, by model name, beside the built-in ones
   * (a name of a built-in is refused: a test reading `plan` must get `plan`).
   * Each is a pure function of the request, like the built-ins, so a run
   * killed and resumed against the server gets the same replies.
   */
  scenarios?: Record<string, Scenario>;
  /**
   * The time model, the same for a streamed and an unstreamed reply, so a
   * bench comparing the two (or us and a peer that asks unstreamed) charges
   * neither side a latency the other does not pay: the first token comes
   * `firstTokenMs` after the request (default 0), then one token every
   * `msPerToken` (default 1, about a fast hosted model). An unstreamed reply
   * answers at firstTokenMs + outputTokens × msPerToken; a streamed one sends
   * its first event at firstTokenMs and paces the rest so that its last
   * arrives at that same moment (PROVIDER_FIRST_TOKEN_MS, PROVIDER_MS_PER_TOKEN).
   */
  firstTokenMs?: number;
  /** See firstTokenMs. */
  msPerToken?: number;
  /**
   * Tests only: a fixed pause between two events of a streamed reply in
   * place of the time model's pacing, for a stream that must last long
   * enough for a Stop to land in the middle of it. Makes streamed and
   * unstreamed replies take different times: the bench never sets it.
   */
  streamChunkDelayMs?: number;
  /**
   * How much the request log keeps (default 10,000 requests and 64 MiB of
   * bodies and tasks): past the bytes the oldest bodies are dropped first,
   * then the oldest requests; past the count the oldest requests. Each drop
   * is counted (GET /_control/log).
   */
  log?: RequestLogLimits;
}

/** One scripted model: the reply to a request, from its turn, the tool results so far, the tools offered and the task (and the whole messages, tools and settings). */
export type Scenario = (input: ScriptInput) => ScriptedReply;

/** A request the provider answered (or is answering), as `requests()` lists it. */
export interface LoggedRequest extends RequestFacts {
  /** The answer's HTTP status; 0 for a reset connection or while pending. */
  status: number;
  /** When the request arrived (ms since the epoch). */
  at: number;
  /** Still being answered (held by a delay, or a stream still sending): tests wait for this instead of for time. */
  pending?: true;
  /** The client closed the connection before the reply's end (an aborted stream, say). */
  aborted?: true;
  /** A `truncated` fault, or a `malformed` one in a stream, ended the reply early. */
  cut?: true;
  /** A streamed reply: when the first event carrying reply text was written (ms since the epoch), what the live stream's latency is measured from. */
  firstTextAt?: number;
  /** The request's system prompt, when it has one: what a test checks its instructions reached the model with. */
  system?: string;
  /** The names of the tools the request offered, in its order. */
  toolNames: string[];
  /**
   * What the request carried, in one shape for both protocols: model,
   * system prompt, messages, tool definitions and settings. Absent when
   * the log dropped it to stay within its `maxBytes` (`bodyOmitted`).
   */
  body?: RequestBody;
  /** The log dropped the body to stay within its `maxBytes` (the oldest bodies go first): the entry keeps its facts and status. A request larger than the whole log keeps its task's first 1,024 characters only. */
  bodyOmitted?: true;
  /** The request's fields besides model, messages, tools and streaming, as received (./requests.ts ScriptedRequest.options). */
  options?: Record<string, unknown>;
}

/** What GET /_control/connections answers. */
export interface ProviderConnections {
  /** Requests to the model routes still being answered. */
  requests: number;
  /** Streamed replies still open (a subset of `requests`). */
  streams: number;
  /** Every open TCP connection: idle keep-alive ones and the control request's own included. */
  sockets: number;
}

export interface RunningProvider {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** The largest request body the provider reads (8 MiB); a larger one gets a 413 naming the limit. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** How deep a request body's arrays and objects may nest; a deeper one gets a 400 naming the limit (a model's real request nests a few levels; the harness caps tool arguments at 64). */
export const MAX_BODY_DEPTH = 256;
/** What is read and thrown away of a body past MAX_BODY_BYTES, so the client reads the 413 instead of a reset; past it the connection is closed. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
/** The longest a reply is paced by the time model, in ms (8,192 tokens at the default 1 ms a token, then no longer). */
const MAX_GENERATION_MS = 8_192;

const ROUTES: Readonly<Record<string, Protocol>> = { '/v1/chat/completions': 'chat', '/v1/messages': 'anthropic' };
/** Good events a stream fault lets through before it strikes, unless the rule says. */
const DEFAULT_AFTER_PARTS = 2;

export async function startProvider(opts: ProviderOptions = {}): Promise<RunningProvider> {
  const faults = new FaultQueue();
  const log = new RequestLog(logLimitsOf(opts.log));
  const latencyMs = opts.latencyMs ?? 0;
  const firstTokenMs = timeSetting('firstTokenMs', opts.firstTokenMs, 0);
  const msPerToken = timeSetting('msPerToken', opts.msPerToken, 1);
  const fixedChunkDelayMs = opts.streamChunkDelayMs === undefined ? null : timeSetting('streamChunkDelayMs', opts.streamChunkDelayMs, 0);
  const builtIn: Readonly<Record<string, Scenario>> = SCENARIOS;
  const own = opts.scenarios ?? {};
  for (const [name, scenario] of Object.entries(own)) {
    if (Object.hasOwn(builtIn, name)) throw new Error(`scenario ${JSON.stringify(name)} is a built-in scenario of the scripted provider; give yours another name`);
    if (typeof scenario !== 'function') throw new Error(`scenario ${JSON.stringify(name)} must be a function (input) => reply, got ${typeof scenario}`);
  }
  const scenarios: Readonly<Record<string, Scenario>> = { ...builtIn, ...own };
  // Counted so a test can see that a Stop closed a streamed request.
  const open = { requests: 0, streams: 0, sockets: new Set<Socket>() };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, chatError(`internal error: ${String(err)}`, 'server_error'));
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    open.sockets.add(socket);
    socket.on('close', () => open.sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/_control/')) return control(req, res, url);
    // `service` names us: npm start shares a provider already on its port only when it is this one (dev/stack/start.ts).
    if (req.method === 'GET' && url.pathname === '/health') return sendJson(res, 200, { ok: true, service: PROVIDER_SERVICE });
    const protocol = req.method === 'POST' && Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
    if (!protocol) return sendJson(res, 404, chatError(`no route ${req.method} ${url.pathname}`, 'invalid_request_error'));
    open.requests += 1;
    res.on('close', () => (open.requests -= 1));
    const error = (status: number, message: string, chatType: string) => (protocol === 'anthropic' ? anthropicError(status, message) : chatError(message, chatType));

    if (protocol === 'chat' && opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendJson(res, 401, error(401, 'Incorrect API key provided.', 'invalid_api_key'));
    }
    if (protocol === 'anthropic' && opts.apiKey && req.headers['x-api-key'] !== opts.apiKey) {
      return sendJson(res, 401, error(401, 'invalid x-api-key', 'invalid_api_key'));
    }
    if (protocol === 'anthropic' && typeof req.headers['anthropic-version'] !== 'string') {
      return sendJson(res, 400, error(400, 'anthropic-version: header is required', 'invalid_request_error'));
    }
    const text = await readBody(req);
    if (text === null) {
      return sendJson(res, 413, error(413, `request body is larger than the scripted provider's limit of ${MAX_BODY_BYTES} bytes (8 MiB)`, 'invalid_request_error'), { connection: 'close' });
    }
    const depth = nestingOver(text, MAX_BODY_DEPTH);
    if (depth) return sendJson(res, 400, error(400, `request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep; the limit is ${MAX_BODY_DEPTH}`, 'invalid_request_error'));
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      return sendJson(res, 400, error(400, `request body is not JSON: ${err instanceof Error ? err.message : String(err)}`, 'invalid_request_error'));
    }
    const request = protocol === 'chat' ? parseChatRequest(json) : parseAnthropicRequest(json);
    if (typeof request === 'string') return sendJson(res, 400, error(400, request, 'invalid_request_error'));
    const { model, messages, tools, maxTokens, stream } = request;
    const body = requestBodyOf(request, json);
    const input = scriptInputOf(body);

    const facts: RequestFacts = { model, turn: input.turn, task: input.task, protocol, stream };
    // Logged on arrival, so a test can see a request that a delay is holding.
    const system = messages[0]?.role === 'system' ? messages[0].content : undefined;
    const entry: LoggedRequest = { ...facts, status: 0, at: Date.now(), pending: true, toolNames: input.toolNames, options: request.options, ...(typeof system === 'string' ? { system } : {}) };
    log.add(entry, JSON.stringify(body));
    const settle = (status: number) => {
      entry.status = status;
      delete entry.pending;
    };
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      settle(status);
      sendJson(res, status, payload, headers);
    };

    const fault = faults.take(facts);
    if (latencyMs > 0) await delay(latencyMs);
    if (fault && (await applyFault(fault, protocol, stream, res, reply))) {
      // Faults that answer at the socket level: status 0 for a reset.
      if (fault.type === 'reset' || fault.type === 'malformed' || (fault.type === 'down' && fault.status === undefined)) settle(fault.type === 'malformed' ? 200 : 0);
      return;
    }

    const script = Object.hasOwn(scenarios, model) ? scenarios[model] : undefined;
    if (!script) return reply(404, error(404, `The model \`${model}\` does not exist.`, 'model_not_found'));
    const broken = protocolError(messages);
    if (broken) return reply(400, error(400, broken, 'invalid_request_error'));
    // A harness asking for a summary of old turns (context strategy "summarize").
    const scripted: ScriptedReply =
      fault?.type === 'reply'
        ? fault.reply
        : messages[0]?.role === 'system' && messages[0].content === SUMMARY_INSTRUCTION
          ? { type: 'answer', content: summaryOf(String(messages[1]?.content ?? '')) }
          : script(input);
    const answer = await answerOf(model, scripted, messages, tools, maxTokens);
    if (fault?.type === 'tokenizer') answer.usage.prompt = Math.ceil(answer.usage.prompt * fault.factor) + (fault.overheadTokens ?? 0);
    const usage = fault?.type !== 'no_usage';
    // Faults that strike part-way through the reply: after some events of a stream, half-way through a body.
    const cut = fault?.type === 'truncated' || (fault?.type === 'malformed' && stream) ? fault : null;

    // The reply's generation time (the time model above): the same whether it is streamed or not. Capped at
    // MAX_GENERATION_MS: a hostile scenario's megabyte answer (no real model writes 300,000 tokens in one reply)
    // tests the harness's bounds, and must not spend minutes of the suite being paced.
    const generationMs = Math.min(answer.usage.completion * msPerToken, MAX_GENERATION_MS);
    if (!stream) {
      await delay(firstTokenMs + generationMs);
      const payload = protocol === 'chat' ? chatBody(answer) : anthropicBody(answer, { usage });
      if (protocol === 'chat' && !usage) delete (payload as { usage?: unknown }).usage;
      if (!cut) return reply(200, payload);
      entry.cut = true;
      settle(200);
      return sendHalf(res, JSON.stringify(payload));
    }
    const frames = protocol === 'chat' ? chatStreamFrames(answer, { includeUsage: request.includeUsage, usage }) : anthropicStreamFrames(answer, { usage });
    const sent = cut ? frames.slice(0, Math.min(cut.afterParts ?? DEFAULT_AFTER_PARTS, frames.length)) : frames;
    if (cut?.type === 'malformed') sent.push(protocol === 'chat' ? BROKEN_CHAT_FRAME : BROKEN_ANTHROPIC_FRAME);
    if (cut) entry.cut = true;
    open.streams += 1;
    const progress = { ended: false };
    // Logged the moment the client goes away, not when the next event would have been due.
    res.on('close', () => {
      open.streams -= 1;
      if (progress.ended) return;
      entry.aborted = true;
      settle(200);
    });
    // First event at firstTokenMs, the rest spread so the last lands when an unstreamed reply would have.
    const gapMs = fixedChunkDelayMs ?? (sent.length > 1 ? generationMs / (sent.length - 1) : 0);
    await delay(fixedChunkDelayMs === null ? firstTokenMs : 0);
    await sendStream(res, sent, gapMs, progress, () => (entry.firstTextAt ??= Date.now()));
    settle(200);
  }

  function control(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> | void {
    if (url.pathname === '/_control/faults' && req.method === 'POST') {
      return readBody(req).then((text) => {
        if (text === null) return sendJson(res, 413, { error: `fault rule is larger than ${MAX_BODY_BYTES} bytes` }, { connection: 'close' });
        let rule: unknown;
        try {
          rule = JSON.parse(text);
        } catch (err) {
          return sendJson(res, 400, { error: `fault rule is not JSON: ${err instanceof Error ? err.message : String(err)}` });
        }
        if (!isFaultRule(rule)) return sendJson(res, 400, { error: 'expected {match, fault, times?}' });
        faults.add(rule);
        sendJson(res, 200, { ok: true });
      });
    }
    if (url.pathname === '/_control/faults' && req.method === 'DELETE') {
      faults.clear(url.searchParams.get('taskIncludes'));
      return sendJson(res, 200, { ok: true });
    }
    if (url.pathname === '/_control/requests' && req.method === 'GET') {
      const text = log.json(url.searchParams.get('taskIncludes'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (url.pathname === '/_control/log' && req.method === 'GET') {
      const stats: RequestLogStats = log.stats();
      return sendJson(res, 200, stats);
    }
    if (url.pathname === '/_control/connections' && req.method === 'GET') {
      const counts: ProviderConnections = { requests: open.requests, streams: open.streams, sockets: open.sockets.size };
      return sendJson(res, 200, counts);
    }
    sendJson(res, 404, { error: 'unknown control route' });
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Returns true when the fault answered the request itself (the faults that strike mid-reply are the caller's). */
async function applyFault(
  fault: Fault,
  protocol: Protocol,
  stream: boolean,
  res: ServerResponse,
  reply: (status: number, payload: unknown, headers?: Record<string, string>) => void,
): Promise<boolean> {
  const error = (status: number, message: string) => (protocol === 'anthropic' ? anthropicError(status, message) : chatError(message, 'injected_fault'));
  switch (fault.type) {
    case 'delay':
      await delay(fault.ms);
      return false;
    case 'no_usage':
    case 'tokenizer':
    case 'reply':
    case 'truncated':
      return false;
    case 'reset':
      res.socket?.destroy();
      return true;
    case 'down':
      if (fault.status === undefined) res.socket?.destroy();
      else reply(fault.status, error(fault.status, `injected outage: ${fault.status}`));
      return true;
    case 'malformed':
      if (stream) return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(protocol === 'anthropic' ? '{"id": "msg_broken", "type": "message", "content": [' : '{"id": "chatcmpl-broken", "choices": [');
      return true;
    case 'status': {
      const headers: Record<string, string> =
        fault.retryAfterSec !== undefined ? { 'retry-after': String(fault.retryAfterSec) } : {};
      reply(fault.status, error(fault.status, fault.message ?? `injected ${fault.status}`), headers);
      return true;
    }
  }
}

/** An event that carries reply text: a chat delta with content, or an Anthropic text_delta. */
const TEXT_FRAME = /"content":"(?!")|"type":"text_delta"/;

/**
 * Writes a stream's events `chunkDelayMs` apart, and stops when the client
 * goes away; `progress.ended` once every event was sent.
 */
async function sendStream(res: ServerResponse, frames: string[], chunkDelayMs: number, progress: { ended: boolean }, onText: () => void): Promise<void> {
  let closed = false;
  res.on('close', () => (closed = true));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  // Paced against a deadline per event, not a sleep per gap: a gap under a timer's 1 ms resolution
  // (a short reply's) would otherwise round up and make the stream end later than the unstreamed reply.
  const started = performance.now();
  for (const [i, frame] of frames.entries()) {
    const due = started + i * chunkDelayMs - performance.now();
    if (due >= 1) await delay(due);
    if (closed) return;
    if (TEXT_FRAME.test(frame)) onText();
    if (!res.write(frame)) {
      await new Promise<void>((resolve) => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
  }
  if (closed) return;
  progress.ended = true;
  res.end();
}

/** The first half of a body that promised all of it (its content-length), then the connection closed. */
function sendHalf(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.write(text.slice(0, Math.floor(text.length / 2)), () => res.socket?.destroy());
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * The body as text, or null when it is larger than MAX_BODY_BYTES: what is
 * past the limit is read and thrown away (up to MAX_DRAIN_BYTES more), so the
 * client, still sending, gets to read the 413 rather than a reset.
 */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
      else if (chunks.length) chunks.length = 0;
      if (size > MAX_BODY_BYTES + MAX_DRAIN_BYTES) {
        resolve(null);
        req.destroy();
      }
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * True when the JSON text nests arrays and objects deeper than `limit`
 * (brackets inside strings do not count): checked before parsing, so a
 * hostile body never reaches the recursive steps after it.
 */
export function nestingOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

/** A deterministic summary: which calls the folded turns made, and how much their tools returned. */
function summaryOf(request: string): string {
  const calls = [...request.matchAll(/called (\w+)\(/g)].map((m) => m[1]);
  const tools = [...request.matchAll(/^tool \w+ \[[^\]]*\]: /gm)].length;
  return `Earlier the agent made ${calls.length} tool calls (${[...new Set(calls)].join(', ') || 'none'}) and read ${tools} results, ${request.length} characters in all.`;
}

/** A delay that is 0 costs no timer (and no turn of the event loop): the bench's time model at 0 adds nothing. */
const delay = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/** A time option: a number >= 0, or its default when absent; anything else is refused, naming it. */
function timeSetting(name: string, value: number | undefined, otherwise: number): number {
  if (value === undefined) return otherwise;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`scripted provider option ${name} must be a number of ms >= 0, got ${JSON.stringify(value)}`);
  return value;
}
