// `agent-harness export RUN [--out FILE]` writes a run's turns and
// configuration as JSON (AgentRunHandle.export); `agent-harness fork RUN
// --at-turn N` and `fork --from-file FILE --at-turn N` start a run from the
// first N turns of a run or of such a file (AgentClient.fork): a production
// run becomes a regression case, replayable with another model.
import { readFileSync, writeFileSync } from 'node:fs';
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../common/fork.js';
import type { AgentInput } from '../common/contract.js';
import type { AgentClient } from './agent-client.js';
import { CannotExportError, checkForkInput, forkInput, type ForkSpec, type RunExport } from './fork-run.js';
import { CLI_NAMES, limitFlags } from './run-flags.js';
import { UsageError } from './usage-error.js';

export type { RunExport } from './fork-run.js';

export async function exportRun(agent: AgentClient, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { out: { type: 'string' }, 'run-id': { type: 'string' } } });
  const workflowId = positionals[0];
  if (!workflowId) throw new UsageError('missing <workflowId>');
  const handle = agent.getHandle(workflowId, values['run-id']);
  const doc = await handle.export().catch((err: unknown) => {
    if (err instanceof CannotExportError) throw new UsageError(err.message);
    throw err;
  });
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    console.error(`exported ${doc.turns} turns of ${workflowId} to ${values.out}`);
  } else process.stdout.write(text);
  return 0;
}

export interface ForkArgs {
  /** The source: a run's workflow id, or an export read from --from-file. */
  source: string | RunExport;
  spec: ForkSpec;
  /** The input the fork starts with (checked already). */
  input: AgentInput;
  /** The source's workflow id, for messages. */
  from: string;
  /** The new run's workflow id, if given. */
  id: string | undefined;
  detach: boolean;
}

/** `fork`'s flags into the fork, checked (a file's too) before anything connects. */
export function forkArgs(rest: string[]): ForkArgs {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      'at-turn': { type: 'string' },
      'from-file': { type: 'string' },
      'run-id': { type: 'string' },
      message: { type: 'string' },
      model: { type: 'string' },
      'max-turns': { type: 'string' },
      budget: { type: 'string' },
      id: { type: 'string' },
      detach: { type: 'boolean' },
    },
  });
  const at = values['at-turn'];
  if (at === undefined) throw new UsageError('missing --at-turn N (the turns to keep, 0 for none)');
  if (!/^\d+$/.test(at.trim())) throw new UsageError(`--at-turn must be a whole number >= 0, got ${JSON.stringify(at)}`);
  const file = values['from-file'];
  if (file !== undefined && positionals[0] !== undefined) throw new UsageError('give a run or --from-file FILE, not both');
  if (file === undefined && positionals[0] === undefined) throw new UsageError('missing <workflowId> (or --from-file FILE)');
  const limits = limitFlags(values);
  const source = file !== undefined ? readExport(file) : (positionals[0] as string);
  const spec: ForkSpec = {
    atTurn: Number(at),
    // An export is one execution already: --run-id picks one of a run's.
    ...(file === undefined && values['run-id'] ? { runId: values['run-id'] } : {}),
    ...(values.message !== undefined ? { message: values.message } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
  };
  const input = forkInput(source, spec);
  // The same checks AgentClient.fork makes; here before connecting, a file's named by its path.
  checkForkInput(source, spec, input, CLI_NAMES, file);
  return { source, spec, input, from: typeof source === 'string' ? source : source.workflowId, id: values.id, detach: values.detach ?? false };
}

/** An export file, or a UsageError naming what is wrong with it. */
export function readExport(file: string): RunExport {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON: an export is written by agent-harness export RUN --out FILE`);
  }
  const d = doc as Partial<RunExport> | null;
  const wrong = (what: string) => new UsageError(`${file} is not a run export: ${what}`);
  if (typeof d !== 'object' || d === null || Array.isArray(d)) throw wrong('it is not a JSON object');
  if (d.format !== EXPORT_FORMAT) throw wrong(`"format" is ${JSON.stringify(d.format)}, not ${JSON.stringify(EXPORT_FORMAT)}`);
  if (d.version !== EXPORT_VERSION) throw wrong(`"version" is ${JSON.stringify(d.version)}; this CLI reads version ${EXPORT_VERSION}`);
  if (typeof d.workflowId !== 'string') throw wrong('"workflowId" is missing');
  if (!Array.isArray(d.messages) || d.messages.length === 0) throw wrong('"messages" is missing or empty');
  if (typeof d.config !== 'object' || d.config === null || typeof d.config.task !== 'string') throw wrong('"config" (the run\'s resolved configuration, with its task) is missing');
  if (!Array.isArray(d.turnCostsUsd)) throw wrong('"turnCostsUsd" is missing');
  return d as RunExport;
}
