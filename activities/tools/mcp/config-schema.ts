// The shape of one server's entry in the MCP config file: each setting's type
// and the words a refusal uses. Which transport an entry is (the presence of
// "command" or "url"), its defaults and ${NAME} expansion are ./config's.
import { z } from 'zod';
import { strictObject } from '../../../common/schema-problem.js';

const string = z.string('must be a string');
// An entry that is not a string is named by its place: `servers.x.tools[2] must be a string`.
const strings = z.array(z.string('must be a string'), 'must be a list of strings').optional();
const flag = z.boolean('must be true or false').optional();
const ms = z.number('must be a positive integer (ms)').refine((n) => Number.isInteger(n) && n > 0, 'must be a positive integer (ms)').optional();
const stringMap = z.record(z.string(), z.string('must be a string'), 'must map names to strings').optional();

/** The harness's policies, for either transport (in the order a refusal lists the settings). */
const policy = {
  prefix: string.optional(),
  tools: strings,
  readOnly: strings,
  idempotent: strings,
  trustAnnotations: flag,
  requireApproval: strings,
  skipApproval: strings,
  timeoutMs: ms,
  connectTimeoutMs: ms,
  enabledByDefault: flag,
};

const NOT_OBJECT = 'must be an object';
const UNKNOWN = 'is not a setting';

/** A server run as a process, spoken to over stdio: `command` (required), `args`, `env`, `cwd`, and the harness's policies (docs/tools.md). */
export const stdioServer = strictObject(
  { ...policy, command: string.refine((c) => c !== '', 'must not be empty'), args: strings, env: stringMap, cwd: string.optional() },
  NOT_OBJECT,
  UNKNOWN,
);

/** A server reached over HTTP: `url` (required), `headers`, and the harness's policies (docs/tools.md). */
export const httpServer = strictObject({ ...policy, url: string, headers: stringMap }, NOT_OBJECT, UNKNOWN);

/** One server's entry as written in the config (AGENT_MCP_CONFIG's file, or AgentPlugin's `mcp` option): a process over stdio, or a URL. */
export type McpServerEntry = z.input<typeof stdioServer> | z.input<typeof httpServer>;

/** The MCP config: `{"servers": {"<name>": {...}}}` (docs/tools.md lists every setting). */
export interface McpConfigFile {
  /** Each server by the name its tools are listed under. */
  servers: Record<string, McpServerEntry>;
}
