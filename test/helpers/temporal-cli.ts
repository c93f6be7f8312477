// The real `temporal` CLI against the test server, as ops tooling drives the
// harness: its output parsed from JSON, or its refusal (exit code, stderr).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';

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
