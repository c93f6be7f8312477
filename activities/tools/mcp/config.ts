// The MCP servers a worker offers tools from (AGENT_MCP_CONFIG, a JSON file):
// how to reach each one and the harness's policies for its tools. Parsed and
// checked at worker start, so a typo stops the worker with the reason instead
// of failing runs later.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { firstProblem } from '../../../common/schema-problem.js';
import { httpServer, stdioServer } from './config-schema.js';

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

/**
 * Reads and checks the file; relative `cwd`s are resolved against its folder
 * (which is also the default cwd). `setting`: what a refusal calls the file's
 * setting.
 */
export function readMcpConfig(path: string, env: NodeJS.ProcessEnv = process.env, setting = 'AGENT_MCP_CONFIG'): McpServerConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${setting} ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseMcpConfig(raw, { source: `${setting} ${path}`, baseDir: dirname(resolve(path)), env });
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
    if (isStdio === ('url' in s)) return fail(`${at} needs exactly one of "command" (stdio) or "url" (streamable HTTP)`);
    const parsed = (isStdio ? stdioServer : httpServer).safeParse(s);
    if (!parsed.success) {
      const { field, message } = firstProblem(parsed.error);
      return fail(`${at}.${field} ${message}`);
    }
    const c = parsed.data;
    const policy: ServerPolicy = {
      prefix: c.prefix ?? name,
      tools: c.tools ?? null,
      readOnly: c.readOnly ?? [],
      idempotent: c.idempotent ?? [],
      trustAnnotations: c.trustAnnotations ?? false,
      requireApproval: c.requireApproval ?? [],
      skipApproval: c.skipApproval ?? [],
      timeoutMs: c.timeoutMs ?? null,
      connectTimeoutMs: c.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      enabledByDefault: c.enabledByDefault ?? true,
    };
    if ('command' in c) {
      return {
        ...policy,
        name,
        transport: 'stdio' as const,
        command: c.command,
        args: c.args ?? [],
        env: expand(c.env ?? {}, env, `${at}.env`, fail),
        cwd: resolve(opts.baseDir, c.cwd ?? '.'),
      };
    }
    let url: URL;
    try {
      url = new URL(c.url);
    } catch {
      return fail(`${at}.url is not a URL: ${JSON.stringify(c.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`${at}.url must be http(s), got ${url.protocol}`);
    return { ...policy, name, transport: 'http' as const, url, headers: expand(c.headers ?? {}, env, `${at}.headers`, fail) };
  });
}

type Fail = (msg: string) => never;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `${NAME}` in env and header values comes from the worker's environment, so secrets stay out of the file. */
function expand(map: Record<string, string>, env: NodeJS.ProcessEnv, at: string, fail: Fail): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    out[k] = v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? fail(`${at}.${k} uses \${${name}}, which is not set`));
  }
  return out;
}
