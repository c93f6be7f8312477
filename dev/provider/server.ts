// The scripted provider: an HTTP server shaped like OpenAI's
// POST /v1/chat/completions whose replies come from dev/provider/scenarios.ts,
// chosen by the request's `model`. Stateless except for the test-only fault
// queue and request log behind /_control.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultQueue, isFaultRule, type Fault, type RequestFacts } from './faults.js';
import { omittedTurns, SUMMARY_INSTRUCTION } from '../../common/context-window.js';
import { protocolError } from './protocol.js';
import { SCENARIOS, type ScriptedReply, type ScriptInput } from './scenarios.js';
import { countCompletionTokensAsync, countPromptTokensAsync, truncateToTokensAsync, type WireMessage } from '../../common/tokens.js';

export interface ProviderOptions {
  port?: number;
  host?: string;
  /** Fixed delay added to every reply, in ms (the latency knob). */
  latencyMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /**
   * Scenarios of the caller's own, by model name, beside the built-in ones
   * (a name of a built-in is refused: a test reading `plan` must get `plan`).
   * Each is a pure function of the request, like the built-ins, so a run
   * killed and resumed against the server gets the same replies.
   */
  scenarios?: Record<string, Scenario>;
}

/** One scripted model: the reply to a request, from its turn, the tool results so far, the tools offered and the task. */
export type Scenario = (input: ScriptInput) => ScriptedReply;

export interface LoggedRequest extends RequestFacts {
  /** The answer's HTTP status; 0 for a reset connection or while pending. */
  status: number;
  /** When the request arrived (ms since the epoch). */
  at: number;
  /** Still being answered (held by a delay): tests wait for this instead of for time. */
  pending?: true;
}

export interface RunningProvider {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

interface ChatRequest {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  max_tokens?: unknown;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
const LOG_LIMIT = 10_000;

export async function startProvider(opts: ProviderOptions = {}): Promise<RunningProvider> {
  const faults = new FaultQueue();
  const log: LoggedRequest[] = [];
  const latencyMs = opts.latencyMs ?? 0;
  const builtIn: Readonly<Record<string, Scenario>> = SCENARIOS;
  const own = opts.scenarios ?? {};
  for (const [name, scenario] of Object.entries(own)) {
    if (Object.hasOwn(builtIn, name)) throw new Error(`scenario ${JSON.stringify(name)} is a built-in scenario of the scripted provider; give yours another name`);
    if (typeof scenario !== 'function') throw new Error(`scenario ${JSON.stringify(name)} must be a function (input) => reply, got ${typeof scenario}`);
  }
  const scenarios: Readonly<Record<string, Scenario>> = { ...builtIn, ...own };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, apiError(`internal error: ${String(err)}`, 'server_error'));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/_control/')) return control(req, res, url);
    if (req.method === 'GET' && url.pathname === '/health') return sendJson(res, 200, { ok: true });
    if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      return sendJson(res, 404, apiError(`no route ${req.method} ${url.pathname}`, 'invalid_request_error'));
    }
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendJson(res, 401, apiError('Incorrect API key provided.', 'invalid_api_key'));
    }
    let body: ChatRequest;
    try {
      body = JSON.parse(await readBody(req)) as ChatRequest;
    } catch (err) {
      return sendJson(res, 400, apiError(`request body is not JSON: ${String(err)}`, 'invalid_request_error'));
    }
    const model = typeof body.model === 'string' ? body.model : '';
    const messages = Array.isArray(body.messages) ? (body.messages as WireMessage[]) : null;
    const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : undefined;
    if (!messages) return sendJson(res, 400, apiError('`messages` must be an array', 'invalid_request_error'));
    const maxTokens = body.max_tokens === undefined ? null : body.max_tokens;
    if (maxTokens !== null && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) {
      return sendJson(res, 400, apiError(`max_tokens must be a positive integer, got ${JSON.stringify(maxTokens)}`, 'invalid_request_error'));
    }

    const facts: RequestFacts = {
      model,
      turn: turnOf(messages),
      task: messages.find((m) => m.role === 'user')?.content ?? '',
    };
    // Logged on arrival, so a test can see a request that a delay is holding.
    const entry: LoggedRequest = { ...facts, status: 0, at: Date.now(), pending: true };
    log.push(entry);
    if (log.length > LOG_LIMIT) log.shift();
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
    if (fault && (await applyFault(fault, res, reply))) {
      // Faults that answer at the socket level: status 0 for a reset.
      if (fault.type === 'reset' || fault.type === 'malformed' || (fault.type === 'down' && fault.status === undefined)) settle(fault.type === 'malformed' ? 200 : 0);
      return;
    }

    const script = Object.hasOwn(scenarios, model) ? scenarios[model] : undefined;
    if (!script) return reply(404, apiError(`The model \`${model}\` does not exist.`, 'model_not_found'));
    const broken = protocolError(messages);
    if (broken) return reply(400, apiError(broken, 'invalid_request_error'));
    // A harness asking for a summary of old turns (context strategy "summarize").
    if (messages[0]?.role === 'system' && messages[0].content === SUMMARY_INSTRUCTION) {
      return reply(200, await completion(model, { type: 'answer', content: summaryOf(String(messages[1]?.content ?? '')) }, messages, tools, maxTokens));
    }

    const toolText = messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content ?? '')
      .join('\n');
    const toolNames = (tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name ?? '');
    const answerBody = await completion(model, script({ turn: facts.turn, toolText, toolNames, task: facts.task }), messages, tools, maxTokens);
    if (fault?.type === 'no_usage') delete (answerBody as { usage?: unknown }).usage;
    reply(200, answerBody);
  }

  function control(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> | void {
    if (url.pathname === '/_control/faults' && req.method === 'POST') {
      return readBody(req).then((text) => {
        const rule: unknown = JSON.parse(text);
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
      const marker = url.searchParams.get('taskIncludes');
      return sendJson(res, 200, marker ? log.filter((r) => r.task.includes(marker)) : log);
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

/** Returns true when the fault answered the request itself. */
async function applyFault(
  fault: Fault,
  res: ServerResponse,
  reply: (status: number, payload: unknown, headers?: Record<string, string>) => void,
): Promise<boolean> {
  switch (fault.type) {
    case 'delay':
      await delay(fault.ms);
      return false;
    case 'no_usage':
      return false;
    case 'reset':
      res.socket?.destroy();
      return true;
    case 'down':
      if (fault.status === undefined) res.socket?.destroy();
      else reply(fault.status, apiError(`injected outage: ${fault.status}`, 'injected_fault'));
      return true;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [');
      return true;
    case 'status': {
      const headers: Record<string, string> =
        fault.retryAfterSec !== undefined ? { 'retry-after': String(fault.retryAfterSec) } : {};
      reply(fault.status, apiError(fault.message ?? `injected ${fault.status}`, 'injected_fault'), headers);
      return true;
    }
  }
}

/**
 * One reply with its usage. Like a real API it honours max_tokens: a reply
 * longer than that is cut (its text, or the start of its tool calls' JSON as
 * text) and finishes with "length"; only an `overbill` script reports more.
 * Counted in time slices, so one request with a long unbroken string does
 * not stall every other request the provider is serving.
 */
async function completion(model: string, script: ScriptedReply, messages: WireMessage[], tools: unknown[] | undefined, maxTokens: number | null) {
  let toolCalls =
    script.type === 'calls'
      ? script.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }))
      : script.type === 'raw_calls'
        ? script.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
        : undefined;
  let content = script.type === 'answer' ? script.content : null;
  const prompt = await countPromptTokensAsync(messages, tools);
  let out = await countCompletionTokensAsync(content, toolCalls);
  let cut = false;
  if (maxTokens !== null && out > maxTokens) {
    content = await truncateToTokensAsync(content ?? JSON.stringify(toolCalls), maxTokens);
    toolCalls = undefined;
    out = Math.min(maxTokens, await countCompletionTokensAsync(content, undefined));
    cut = true;
  }
  if (script.overbill) out = Math.max(out, maxTokens ?? out) + 1000;
  return {
    id: `chatcmpl-${model}-${messages.length}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: cut ? 'length' : toolCalls ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out },
  };
}

function apiError(message: string, type: string) {
  return { error: { message, type } };
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * The turn index: assistant messages so far, plus the turns a harness dropped
 * to fit a context window and said so in a note, so a long run keeps counting
 * — and keeps its call ids unique — after a cut.
 */
function turnOf(messages: WireMessage[]): number {
  return messages.filter((m) => m.role === 'assistant').length + omittedTurns(messages);
}

/** A deterministic summary: which calls the folded turns made, and how much their tools returned. */
function summaryOf(request: string): string {
  const calls = [...request.matchAll(/called (\w+)\(/g)].map((m) => m[1]);
  const tools = [...request.matchAll(/^tool \w+ \[[^\]]*\]: /gm)].length;
  return `Earlier the agent made ${calls.length} tool calls (${[...new Set(calls)].join(', ') || 'none'}) and read ${tools} results, ${request.length} characters in all.`;
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
