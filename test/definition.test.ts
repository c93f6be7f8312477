// The definition fingerprint: definitionHash in the status and the result; a
// resumed or forked run carries its source's hash and names what changed
// (definitionChanged, also on its run_started line), and is refused when its
// definition moved under it (a tool spec of a newer deploy) unless the input
// acknowledges it or the worker allows it.
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { Toolset } from '../activities/tools/toolset.js';
import { defineTool, type ToolDefinition } from '../activities/tools/define-tool.js';
import type { AgentInput, RunConfig, RunStatusView } from '../common/contract.js';
import { definitionChanges, definitionHash, definitionSource, unaskedChanges } from '../common/definition.js';
import { statusQuery } from '../common/run-messages.js';
import { detailsText } from '../workflows/visibility.js';
import { renderEvent } from '../client/render.js';
import { useHarness } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';
import { parseBuiltin } from './helpers/builtin-specs.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';
const capped = (maxTurns: number): AgentInput => ({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns, maxBudgetUsd: null } });
// A deployment's own tool, and the same tool as a later deploy might ship it: its description reworded.
const noteLookup = (description: string): ToolDefinition =>
  defineTool({ name: 'note_lookup', description, parameters: { type: 'object', properties: {}, additionalProperties: false }, readOnly: true, run: async () => 'no notes' });
const original = new Toolset([...BUILTIN_TOOLS, noteLookup('Look a note up.')]);
const reworded = new Toolset([...BUILTIN_TOOLS, noteLookup('Look a note up (reworded).')]);

describe('definitionHash (pure)', () => {
  const cfg = parseBuiltin({ task, model: 'runaway', system: 'be brief' });
  it('is the SHA-256 of canonical JSON: stable, and moved by each field of the definition, not by the task or the workspace', () => {
    expect(definitionHash(cfg)).toMatch(/^[0-9a-f]{64}$/);
    expect(definitionHash({ ...cfg, task: 'another task', workspace: 'elsewhere' })).toBe(definitionHash(cfg));
    const variants: [Partial<RunConfig>, string][] = [
      [{ system: 'be thorough' }, 'system'],
      [{ toolSpecs: (cfg.toolSpecs ?? []).slice(1) }, 'tools'],
      [{ model: 'plan' }, 'model'],
      [{ pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 12 } }, 'prices'],
      [{ maxTurns: 99 }, 'limits'],
    ];
    const src = definitionSource(cfg);
    for (const [change, field] of variants) {
      expect(definitionHash({ ...cfg, ...change })).not.toBe(definitionHash(cfg));
      expect(definitionChanges(src, { ...cfg, ...change })).toEqual([field]);
    }
  });

  it('counts as moved under the run only what the continuation did not set itself', () => {
    expect(unaskedChanges(['tools', 'limits'], { task, limits: { maxTurns: 9 } })).toEqual(['tools']);
    expect(unaskedChanges(['model'], { task, model: 'plan' })).toEqual([]);
  });

  it('the details panel of a continuation says what changed', () => {
    const text = detailsText({ cfg: { ...cfg, definitionFrom: { hash: 'ab'.repeat(32), changed: ['tools'] } }, state: { turns: 0, costUsd: 0 } as never, status: 'running', interruption: null, queuedSteers: 0, outage: null });
    expect(text).toContain('**Definition:** changed since its source: tools (source `abababababab`)');
  });
});

describe('definitionHash in runs', () => {
  it('is in the status and the result; a resume on the same worker carries the source hash and names only the limits it raised', async () => {
    const first = await h.start(capped(2));
    const stopped = await first.result();
    expect(stopped.definitionHash).toMatch(/^[0-9a-f]{64}$/);
    expect((await first.query(statusQuery)).definitionHash).toBe(stopped.definitionHash);
    expect(stopped.definitionChanged).toBeUndefined();

    const next = await h.start({ resumeFrom: first.workflowId, limits: { maxTurns: 4 } } as never);
    const r = await next.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 4, sourceDefinitionHash: stopped.definitionHash, definitionChanged: ['limits'] });
    expect(r.definitionHash).not.toBe(stopped.definitionHash);
    const started = h.events(next.workflowId)[0];
    expect(started).toMatchObject({ type: 'run_started', resumedFrom: first.workflowId, sourceDefinitionHash: stopped.definitionHash, definitionChanged: ['limits'] });
    // What `agent-harness resume` prints under its start line.
    expect(renderEvent(started, next.workflowId)?.split('\n')[1]).toBe(
      `  definition changed since its source: limits (source ${stopped.definitionHash?.slice(0, 12)}, now ${r.definitionHash?.slice(0, 12)})`,
    );

    // A fork of it at turn 1: the same definition (its own input sets nothing).
    const fork = await h.start({ forkFrom: { run: first.workflowId, atTurn: 1 } } as never);
    const f = await fork.result();
    expect(f).toMatchObject({ sourceDefinitionHash: stopped.definitionHash, definitionHash: stopped.definitionHash, definitionChanged: [] });
  });

  it('a resume whose tool specs moved under it is refused naming the field; acknowledged, it runs and says so; AGENT_DEFINITION_CHANGE=allow lets it through', { timeout: 120_000 }, async () => {
    const q1 = `defs-first-${randomUUID().slice(0, 6)}`;
    const older = await h.startWorker({ taskQueue: q1, toolset: original });
    const first = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: q1, workflowId: `defs-first-${randomUUID().slice(0, 8)}`, args: [capped(2)] });
    const stopped = await first.result();
    const q2 = `defs-${randomUUID().slice(0, 6)}`;
    const q3 = `defs-allow-${randomUUID().slice(0, 6)}`;
    const newer = await h.startWorker({ taskQueue: q2, toolset: reworded });
    const allowing = await h.startWorker({ taskQueue: q3, toolset: reworded, runDefaults: { definitionChange: 'allow' } });
    try {
      const start = (taskQueue: string, input: Record<string, unknown>) =>
        h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `defs-${randomUUID().slice(0, 8)}`, args: [{ resumeFrom: first.workflowId, limits: { maxTurns: 4 }, ...input } as never] });

      const refused = await start(q2, {});
      const err = await refused.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe('DefinitionChanged');
      expect(cause.message).toBe(
        `the resume of ${first.workflowId} would run on another definition than its source's: tools changed since it ran (not set by this input); ` +
          'start it with "acknowledgeDefinitionChange": true to continue anyway, or set AGENT_DEFINITION_CHANGE=allow on the worker',
      );
      expect(((await refused.query(statusQuery)) as RunStatusView).status).toBe('failed');

      const acknowledged = await start(q2, { acknowledgeDefinitionChange: true });
      expect(await acknowledged.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 4, sourceDefinitionHash: stopped.definitionHash, definitionChanged: ['tools', 'limits'] });

      const allowed = await start(q3, {});
      expect(await allowed.result()).toMatchObject({ status: 'max_turns_exceeded', definitionChanged: ['tools', 'limits'] });
    } finally {
      await newer.shutdown();
      await allowing.shutdown();
      // Last: a resume reads its source's configuration by a query, which a worker of the source's queue answers.
      await older.shutdown();
    }
  });
});
