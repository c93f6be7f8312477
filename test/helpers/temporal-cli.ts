// The real `temporal` CLI against the test server, as ops tooling drives the
// harness: its output parsed from JSON, or its refusal (exit code, stderr).
import type { Client } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { isDeepStrictEqual, promisify } from 'node:util';
import type { RunResult } from '../../common/contract.js';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';
import type { agentRun } from '../../workflows/index.js';

const exec = promisify(execFile);

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `temporal <args> --address A --output json`; resolves with its outcome whatever its exit code. */
export function temporalCli(address: string, ...args: string[]): Promise<CliOutcome> {
  return exec(findTemporalCli(), [...args, '--address', address, '--output', 'json'], { timeout: 30_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
}

/** Like temporalCli, but a non-zero exit is an error naming what the CLI said. */
export async function temporalOk(address: string, ...args: string[]): Promise<string> {
  const r = await temporalCli(address, ...args);
  if (r.code !== 0) throw new Error(`temporal ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * The value as the CLI prints a JSON payload: it re-encodes the payload through
 * Go, where an empty list comes out as `null` (a run that ended before its
 * first turn prints `"promptTokensPerTurn": null`, the stored payload and every
 * SDK client read `[]`). Every other value prints as stored.
 */
function emptyArraysAsNull(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? null : v.map(emptyArraysAsNull);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, emptyArraysAsNull(x)]));
  return v;
}

/**
 * A run's result as `temporal workflow result` prints it, typed without a
 * cast: the client's reading of the same run through a handle typed by the
 * workflow, and an error unless the CLI printed exactly that value.
 */
export async function cliRunResult(client: Client, address: string, workflowId: string): Promise<RunResult> {
  const result = await client.workflow.getHandle<typeof agentRun>(workflowId).result();
  const out: { result?: unknown } = JSON.parse(await temporalOk(address, 'workflow', 'result', '--workflow-id', workflowId));
  if (!isDeepStrictEqual(out.result, emptyArraysAsNull(result))) throw new Error(`temporal workflow result printed another result for ${workflowId} than the client reads: the CLI printed ${JSON.stringify(out.result)}, the client read ${JSON.stringify(result)}`);
  return result;
}
