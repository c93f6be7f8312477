// `agent-harness ops` (the ops server, ./ops-server.ts) and `agent-harness
// audit` (the record of decisions, ./ops-audit.ts) as commands of the bin.
// The token is read from AGENT_OPS_TOKEN only, never a flag, which every
// local user could read in the process list.
import type { Client } from '@temporalio/client';
import { writeFileSync } from 'node:fs';
import { approverPolicy } from '../node/config.js';
import type { ApproverPolicy } from '../common/signed-decision.js';
import { auditCsv, auditDecisions, auditJsonl, parseTimeBound } from './ops-audit.js';
import { startOpsServer, type OpsServer } from './ops-server.js';
import { parseFlags } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The ops server, started from flags and the environment; throws UsageError naming the flag or variable at fault. */
export async function startOpsCommand(args: readonly string[], client: () => Promise<Client>, env: NodeJS.ProcessEnv = process.env): Promise<OpsServer> {
  const { values, positionals } = parseFlags({
    args: [...args],
    allowPositionals: true,
    options: { port: { type: 'string' }, host: { type: 'string' }, approvers: { type: 'string' }, 'public-url': { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  // Refused before anything else: a server without a token would answer anyone who reaches the port.
  const token = env.AGENT_OPS_TOKEN?.trim();
  if (!token) throw new UsageError('AGENT_OPS_TOKEN is required: the ops server answers only requests with Authorization: Bearer <AGENT_OPS_TOKEN> (generate one: openssl rand -hex 32)');
  if (token.length < 16) throw new UsageError(`AGENT_OPS_TOKEN must be at least 16 characters (a guessable token is no lock), got ${token.length}`);
  const portText = values.port ?? env.OPS_PORT ?? '8790';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) throw new UsageError(`${values.port !== undefined ? '--port' : 'OPS_PORT'} must be a whole number from 0 to 65535, got ${JSON.stringify(portText)}`);
  const host = values.host ?? env.OPS_HOST ?? '127.0.0.1';
  const policyPath = values.approvers ?? env.AGENT_APPROVERS;
  let approvers: ApproverPolicy | null = null;
  if (policyPath) {
    try {
      approvers = approverPolicy(policyPath);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const publicUrl = values['public-url'] ?? env.OPS_PUBLIC_URL ?? null;
  if (publicUrl !== null) {
    try {
      new URL(publicUrl);
    } catch {
      throw new UsageError(`${values['public-url'] !== undefined ? '--public-url' : 'OPS_PUBLIC_URL'} must be a URL (https://ops.example.com), got ${JSON.stringify(publicUrl)}`);
    }
  }
  const c = await client();
  return startOpsServer(port, host, { client: c, token, approvers, publicUrl }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(err.code === 'EADDRINUSE' ? `port ${port} on ${host} is in use (--port / OPS_PORT)` : `cannot listen on ${host}:${port}: ${err.message}`);
  });
}

/** `agent-harness ops`: starts, prints where, serves until SIGINT or SIGTERM. */
export async function opsCommand(args: readonly string[], client: () => Promise<Client>, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const started = await startOpsCommand(args, client, env);
  console.log(`ops server on ${started.url} (bearer token required): open ${started.url}/#token=<AGENT_OPS_TOKEN>`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await started.close();
  return 0;
}

/** `agent-harness audit --from T --to T [--format jsonl|csv] [--task-queue Q] [--out FILE]`: every decision taken in the range. */
export async function auditCommand(args: readonly string[], client: () => Promise<Client>): Promise<number> {
  const { values, positionals } = parseFlags({
    args: [...args],
    allowPositionals: true,
    options: { from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' }, 'task-queue': { type: 'string' }, out: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const format = values.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format must be jsonl or csv, got ${JSON.stringify(format)}`);
  let from: Date;
  let to: Date;
  try {
    to = values.to === undefined ? new Date() : parseTimeBound(values.to, '--to');
    from = values.from === undefined ? new Date(to.getTime() - 86_400_000) : parseTimeBound(values.from, '--from');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (from.getTime() > to.getTime()) throw new UsageError(`--from (${from.toISOString()}) is after --to (${to.toISOString()})`);
  const lines = await auditDecisions(await client(), { from, to }, values['task-queue'] !== undefined ? { taskQueue: values['task-queue'] } : {});
  const text = format === 'csv' ? auditCsv(lines) : auditJsonl(lines);
  if (values.out !== undefined) writeFileSync(values.out, text);
  else process.stdout.write(text);
  return 0;
}
