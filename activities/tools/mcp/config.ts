// The MCP servers a worker offers tools from (AGENT_MCP_CONFIG, a JSON file):
// how to reach each one and the harness's policies for its tools. Parsed and
// checked at worker start, so a typo stops the worker with the reason instead
// of failing runs later.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

interface ServerPolicy {
  /** What the harness names its tools: `<prefix>_<tool>` (default: the server's key). */
  prefix: string;
  /** Offer only the tools matching these names or globs (null: all). A pattern that matches no tool is an error at start. */
  tools: string[] | null;
  /** Tools that are read-only (cacheable by the dedupe gate, no approval by default), besides those the server marks readOnlyHint. */
  readOnly: string[];
  /** Believe the server's `readOnlyHint` annotations (default true). */
  trustAnnotations: boolean;
  /**
   * Writes that may simply be done again (retried by Temporal, outside the
   * effect protocol), besides those the server marks idempotentHint when its
   * annotations are trusted. Any other write that fails after it was sent is
   * reported as an unknown outcome, never sent again.
   */
  idempotent: string[];
  /** Always ask a person (wins over skipApproval). */
  requireApproval: string[];
  /** Never ask a person. */
  skipApproval: string[];
  /** Per attempt, for the activity (null: the run's toolTimeoutMs); the MCP request ends a margin before it. */
  timeoutMs: number | null;
  /** How long connecting and listing may take at worker start. */
  connectTimeoutMs: number;
  /** Offered to runs whose input names no tools (default true). */
  enabledByDefault: boolean;
}

export type McpServerConfig = ServerPolicy &
  (
    | { name: string; transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string }
    | { name: string; transport: 'http'; url: URL; headers: Record<string, string> }
  );

export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

const COMMON_KEYS = ['prefix', 'tools', 'readOnly', 'idempotent', 'trustAnnotations', 'requireApproval', 'skipApproval', 'timeoutMs', 'connectTimeoutMs', 'enabledByDefault'];
const STDIO_KEYS = ['command', 'args', 'env', 'cwd'];
const HTTP_KEYS = ['url', 'headers'];

/** Reads and checks the file; relative `cwd`s are resolved against its folder (which is also the default cwd). */
export function readMcpConfig(path: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`AGENT_MCP_CONFIG ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseMcpConfig(raw, { source: `AGENT_MCP_CONFIG ${path}`, baseDir: dirname(resolve(path)), env });
}

export function parseMcpConfig(raw: unknown, opts: { source: string; baseDir: string; env?: NodeJS.ProcessEnv }): McpServerConfig[] {
  const fail = (msg: string): never => {
    throw new Error(`${opts.source}: ${msg}`);
  };
  if (!isObject(raw) || !isObject(raw.servers)) return fail('expected {"servers": {"<name>": {...}}}');
  const env = opts.env ?? process.env;
  return Object.entries(raw.servers).map(([name, s]) => {
    const at = `servers.${name}`;
    if (!isObject(s)) return fail(`${at} must be an object`);
    const isStdio = 'command' in s;
    const isHttp = 'url' in s;
    if (isStdio === isHttp) return fail(`${at} needs exactly one of "command" (stdio) or "url" (streamable HTTP)`);
    const known = [...COMMON_KEYS, ...(isStdio ? STDIO_KEYS : HTTP_KEYS)];
    for (const k of Object.keys(s)) if (!known.includes(k)) fail(`${at}.${k} is not a setting (known: ${known.join(', ')})`);
    const policy: ServerPolicy = {
      prefix: optString(s.prefix, `${at}.prefix`, fail) ?? name,
      tools: s.tools === undefined ? null : strings(s.tools, `${at}.tools`, fail),
      readOnly: s.readOnly === undefined ? [] : strings(s.readOnly, `${at}.readOnly`, fail),
      idempotent: s.idempotent === undefined ? [] : strings(s.idempotent, `${at}.idempotent`, fail),
      trustAnnotations: optBool(s.trustAnnotations, `${at}.trustAnnotations`, fail) ?? false,
      requireApproval: s.requireApproval === undefined ? [] : strings(s.requireApproval, `${at}.requireApproval`, fail),
      skipApproval: s.skipApproval === undefined ? [] : strings(s.skipApproval, `${at}.skipApproval`, fail),
      timeoutMs: optPositive(s.timeoutMs, `${at}.timeoutMs`, fail) ?? null,
      connectTimeoutMs: optPositive(s.connectTimeoutMs, `${at}.connectTimeoutMs`, fail) ?? DEFAULT_CONNECT_TIMEOUT_MS,
      enabledByDefault: optBool(s.enabledByDefault, `${at}.enabledByDefault`, fail) ?? true,
    };
    if (isStdio) {
      const command = optString(s.command, `${at}.command`, fail) ?? '';
      if (command === '') fail(`${at}.command must not be empty`);
      return {
        ...policy,
        name,
        transport: 'stdio' as const,
        command,
        args: s.args === undefined ? [] : strings(s.args, `${at}.args`, fail),
        env: expand(stringMap(s.env, `${at}.env`, fail), env, `${at}.env`, fail),
        cwd: resolve(opts.baseDir, optString(s.cwd, `${at}.cwd`, fail) ?? '.'),
      };
    }
    const rawUrl = optString(s.url, `${at}.url`, fail) ?? '';
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return fail(`${at}.url is not a URL: ${JSON.stringify(rawUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`${at}.url must be http(s), got ${url.protocol}`);
    return { ...policy, name, transport: 'http' as const, url, headers: expand(stringMap(s.headers, `${at}.headers`, fail), env, `${at}.headers`, fail) };
  });
}

type Fail = (msg: string) => never;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optString(v: unknown, at: string, fail: Fail): string | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : fail(`${at} must be a string`);
}

function optBool(v: unknown, at: string, fail: Fail): boolean | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'boolean' ? v : fail(`${at} must be true or false`);
}

function optPositive(v: unknown, at: string, fail: Fail): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fail(`${at} must be a positive integer (ms)`);
}

function strings(v: unknown, at: string, fail: Fail): string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : fail(`${at} must be a list of strings`);
}

function stringMap(v: unknown, at: string, fail: Fail): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v) || !Object.values(v).every((x) => typeof x === 'string')) return fail(`${at} must map names to strings`);
  return v as Record<string, string>;
}

/** `${NAME}` in env and header values comes from the worker's environment, so secrets stay out of the file. */
function expand(map: Record<string, string>, env: NodeJS.ProcessEnv, at: string, fail: Fail): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    out[k] = v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? fail(`${at}.${k} uses \${${name}}, which is not set`));
  }
  return out;
}
