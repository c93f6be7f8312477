// `agent-harness export RUN [--out FILE]` writes a run's turns and
// configuration as JSON; `agent-harness fork RUN --at-turn N` and
// `fork --from-file FILE --at-turn N` start a run from the first N turns of a
// run or of such a file (common/fork.ts): a production run becomes a
// regression case, replayable with another model.
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import { readFileSync, writeFileSync } from 'node:fs';
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import { configQuery, statusQuery, transcriptQuery } from '../common/run-messages.js';
import { inputOfConfig } from '../common/resume-input.js';
import { cutAtTurn, EXPORT_FORMAT, EXPORT_VERSION } from '../common/fork.js';
import { turnCostsOf } from '../activities/turn-costs.js';
import { InputError } from '../common/input-error.js';
import { parseForkFrom } from '../common/fork-input.js';
import type { AgentInput, ChatMessage, RunConfig, RunStatusView } from '../common/contract.js';
import { checkInput, limitFlags } from './run-flags.js';
import { UsageError } from './usage-error.js';

/** What `export` writes: enough to fork from without the source (its history may be gone by then). */
export interface RunExport {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  workflowId: string;
  /** The execution read. */
  runId: string;
  exportedAt: string;
  status: RunStatusView;
  config: RunConfig;
  turns: number;
  /** Turn k's cost at index k - 1, where the source's history holds it (null where it does not). */
  turnCostsUsd: (number | null)[];
  messages: ChatMessage[];
}

export async function exportRun(c: Client, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { out: { type: 'string' }, 'run-id': { type: 'string' } } });
  const workflowId = positionals[0];
  if (!workflowId) throw new UsageError('missing <workflowId>');
  const handle = c.workflow.getHandle(workflowId, values['run-id']);
  const described = await handle.describe();
  const config = await handle.query(configQuery).catch((err: unknown) => {
    if (err instanceof QueryNotRegisteredError) throw new UsageError(`run ${workflowId} has no configuration to export (it predates the config query, or failed before its loop)`);
    throw err;
  });
  const messages = await handle.query(transcriptQuery);
  const costs = await turnCostsOf(c, workflowId, described.runId, config.pricing);
  const turns = messages.filter((m) => m.role === 'assistant').length;
  const doc: RunExport = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    workflowId,
    runId: described.runId,
    exportedAt: new Date().toISOString(),
    status: await handle.query(statusQuery),
    config,
    turns,
    turnCostsUsd: Array.from({ length: turns }, (_, i) => costs[i] ?? null),
    messages,
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    console.error(`exported ${turns} turns of ${workflowId} to ${values.out}`);
  } else process.stdout.write(text);
  return 0;
}

export interface ForkArgs {
  input: AgentInput;
  /** The source's workflow id, for the new id and messages. */
  from: string;
  /** What the flags set on top of the source's configuration (model, limits). */
  overrides: Partial<AgentInput>;
  /** The new run's workflow id, if given. */
  id: string | undefined;
  detach: boolean;
}

/** `fork`'s flags into the input, checked before anything connects. */
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
  const atTurn = Number(at);
  const file = values['from-file'];
  if (file !== undefined && positionals[0] !== undefined) throw new UsageError('give a run or --from-file FILE, not both');
  if (file === undefined && positionals[0] === undefined) throw new UsageError('missing <workflowId> (or --from-file FILE)');
  const limits = limitFlags(values);
  const overrides: Partial<AgentInput> = { ...(values.model !== undefined ? { model: values.model } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
  const message = values.message !== undefined ? { message: values.message } : {};
  let input: AgentInput;
  let from: string;
  if (file !== undefined) {
    const doc = readExport(file);
    from = doc.workflowId;
    const { resumeFrom: _r, ...source } = inputOfConfig(doc.config);
    const turnCostsUsd = doc.turnCostsUsd.every((c): c is number => typeof c === 'number') ? { turnCostsUsd: doc.turnCostsUsd } : {};
    // The workflow cuts the file's transcript itself; cut here first, a turn past its end is a bad flag.
    const cut = cutAtTurn(doc.messages, atTurn);
    if (!cut.ok) throw new UsageError(`--at-turn ${atTurn}: ${cut.reason}`);
    input = {
      ...source,
      ...overrides,
      limits: { ...source.limits, ...limits },
      forkFrom: { run: doc.workflowId, atTurn, transcript: doc.messages, ...turnCostsUsd, ...message },
    } as AgentInput;
    checkInput(input, (field) => forkFlagOf(field, overrides), file);
  } else {
    from = positionals[0] as string;
    input = { ...overrides, forkFrom: { run: from, atTurn, ...(values['run-id'] ? { runId: values['run-id'] } : {}), ...message } } as AgentInput;
  }
  try {
    parseForkFrom(input as unknown as Record<string, unknown>);
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(err.message);
    throw err;
  }
  return { input, from, overrides, id: values.id, detach: values.detach ?? false };
}

/** The fork flag that set an input field, if it was given. */
export function forkFlagOf(field: string, overrides: Partial<AgentInput>): string | null {
  if (field === 'model' && overrides.model !== undefined) return '--model';
  if (field === 'limits.maxTurns' && overrides.limits?.maxTurns !== undefined) return '--max-turns';
  if (field === 'limits.maxBudgetUsd' && overrides.limits?.maxBudgetUsd !== undefined) return '--budget';
  return null;
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
