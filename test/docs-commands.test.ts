// Every command the README and docs/ show is run: here, against the suite's
// dev server, as written (the ids and the task queue of the example replaced
// by this file's own); or by the test file named for it, which must contain
// the equivalent invocation; or it is listed as not runnable here, with the
// reason. A command in none of these fails the first test until it is added,
// and an entry that no longer matches a command fails too.
import { exec as execCb, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { BUILT_IN_DEFAULTS, DEFAULT_MAX_REPLY_TOKENS, DEFAULT_MIN_REPLY_TOKENS } from '../common/defaults.js';
import type { RunStatusView } from '../common/contract.js';
import { statusQuery } from '../common/run-messages.js';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { DOC_FILES, documentedCommands, type DocCommand } from './helpers/docs-commands.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';

const h = useHarness();
const execShell = promisify(execCb);

/**
 * What a command needs before it runs here: a run parked on the approval of
 * c2 (`destructive`), a finished `plan` run, a hard-budget run parked on its
 * budget, a workflow id nobody used, or nothing.
 */
type State = 'parked' | 'finished' | 'budget' | 'fresh' | 'none';

type Coverage =
  | { how: 'here'; state: State; exit?: number; stdout?: RegExp }
  /** Run here by a test below that needs more than one command (a second terminal, a worker of its own). */
  | { how: 'flow'; flow: 'approve-readme' | 'own-tool' | 'provider' }
  | { how: 'test'; file: string; contains: string[] }
  | { how: 'not-here'; reason: string };

const ARGS_HASH = 'a839967c4795e47c969a4dc0269dd660ff88e6533c19298678f5603fc8871dd7';
const T = String.raw`(\$T|\.temporal/bin/temporal|temporal)`;
const CLI = String.raw`(bin/agent-harness\.mjs|agent-harness|npm run cli --)`;
const rx = (s: string) => new RegExp(`^${s}`);
const NO_DOCKER = 'no container engine runs here: .ci/run validates docker-compose.yml with docker-compose config, and npm run test:cluster runs the same server natively (docs/cluster.md)';
const REAL_MODEL = 'needs the local model (llama-server built from source, 18–20 min on 2 cores): test/real-model.test.ts runs the same model in npm test once it is built';

/** Command pattern → how it is covered. First match wins; every entry must match a command. */
const COVERAGE: [RegExp, Coverage][] = [
  // README: quick start
  [rx(String.raw`npm install && npm start$`), { how: 'test', file: 'test/start.test.ts', contains: ["'dev/stack/start.ts'", 'status=completed'] }],
  [rx(String.raw`npm test$`), { how: 'test', file: '.ci/run', contains: ['\nnpm ci ', '\nnpm test\n'] }],
  // README: approve a run (npm start parks; a second terminal approves)
  [rx(String.raw`npm start -- --model destructive$`), { how: 'flow', flow: 'approve-readme' }],
  [rx(String.raw`bin/agent-harness\.mjs (status|approve) RUN_ID`), { how: 'flow', flow: 'approve-readme' }],
  // README: the same on an encrypted run, through the bin's codec server
  [rx(String.raw`bin/agent-harness\.mjs codec-server --port 8888 --keys-file `), { how: 'test', file: 'test/codec-server-cli.test.ts', contains: ["'codec-server', '--port'", "'--keys-file'"] }],
  [rx(String.raw`bin/agent-harness\.mjs ops --port 8790 --approvers `), { how: 'test', file: 'test/attacks/ops-server.test.ts', contains: ["main(['ops', '--port'"] }],
  [rx(String.raw`bin/agent-harness\.mjs audit --from 24h --format csv --out `), { how: 'test', file: 'test/ops-server.test.ts', contains: ["main(['audit', '--from'"] }],
  [rx(String.raw`\.temporal/bin/temporal workflow update execute -w RUN_ID --name decide --codec-endpoint `), { how: 'test', file: 'test/codec-server-cli.test.ts', contains: ["'--codec-endpoint', codecUrl", "'--name', 'decide'", 'expect(decoded, decoded.stderr).toMatchObject({ code: 0 })'] }],
  [rx(String.raw`\.temporal/bin/temporal workflow update execute -w RUN_ID --name decide`), { how: 'here', state: 'parked' }],
  // README and docs/tools.md: your own tool
  [rx(String.raw`npm start -- --serve$`), { how: 'test', file: 'test/start.test.ts', contains: ["npmStart(env, '--serve')"] }],
  [rx(String.raw`AGENT_TOOLS_MODULES=examples/tools/notes\.ts AGENT_TASK_QUEUE=agent-harness-notes npm run worker$`), { how: 'flow', flow: 'own-tool' }],
  [rx(String.raw`AGENT_TASK_QUEUE=agent-harness-notes bin/agent-harness\.mjs run --model script`), { how: 'flow', flow: 'own-tool' }],
  // docs/operations.md: the agent-harness CLI
  [rx(String.raw`bin/agent-harness\.mjs --help$`), { how: 'here', state: 'none', stdout: /^usage: agent-harness <command>/ }],
  [rx(String.raw`bin/agent-harness\.mjs run --model plan$`), { how: 'here', state: 'none', stdout: /status=completed\n$/ }],
  [rx(String.raw`bin/agent-harness\.mjs run --model destructive --detach`), { how: 'here', state: 'none' }],
  [rx(String.raw`bin/agent-harness\.mjs run --model runaway --budget 0\.01 --budget-mode hard --detach`), { how: 'here', state: 'none' }],
  [rx(String.raw`bin/agent-harness\.mjs status run-42$`), { how: 'here', state: 'parked', stdout: /awaiting_approval|interrupted/ }],
  [rx(String.raw`bin/agent-harness\.mjs list --awaiting$`), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs approve run-42 c2 --by alice$`), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs approve run-42 c2 --args-hash ${ARGS_HASH}$`), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs reject run-42 c2 --reason`), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs cancel run-42 --reason`), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs steer run-42 `), { how: 'here', state: 'parked' }],
  [rx(String.raw`bin/agent-harness\.mjs result run-42$`), { how: 'here', state: 'finished', stdout: /completed/ }],
  [rx(String.raw`bin/agent-harness\.mjs trace run-42$`), { how: 'here', state: 'finished', stdout: /"type":"run_stopped"/ }],
  [rx(String.raw`bin/agent-harness\.mjs resume run-42 --max-turns 30$`), { how: 'test', file: 'test/cli.test.ts', contains: ["'resume', id, '--max-turns'"] }],
  [rx(String.raw`bin/agent-harness\.mjs trace run-42 --run-id `), { how: 'test', file: 'test/cli.test.ts', contains: ["'trace'", "'--run-id'"] }],
  // docs/operations.md: the temporal CLI
  [rx(String.raw`\$T workflow start --type agentRun --task-queue agent-harness --workflow-id (run-42|hard-1) `), { how: 'here', state: 'fresh' }],
  [rx(String.raw`\$T workflow (query|signal|update execute|cancel) +(-w|--workflow-id) run-42`), { how: 'here', state: 'parked' }],
  [rx(String.raw`\$T workflow result -w run-42$`), { how: 'here', state: 'finished', stdout: /completed/ }],
  [rx(String.raw`${T} workflow list --query '(AgentStatus|AgentErrorType|AgentPendingArgsHash|TemporalWorkerDeploymentVersion)=`), { how: 'here', state: 'none' }],
  [rx(String.raw`\$T workflow count --query 'AgentStatus="failed"'`), { how: 'test', file: 'test/metrics.test.ts', contains: ["'workflow', 'count', '--query', 'AgentStatus=\"failed\"'"] }],
  [rx(String.raw`temporal workflow reset -w run-42 --type LastWorkflowTask`), { how: 'test', file: 'test/reset.test.ts', contains: ["'workflow', 'reset'", "'LastWorkflowTask'", "'--reapply-exclude', 'Signal'"] }],
  // docs/governance.md
  [rx(String.raw`printf '%s' '\{"path":"access\.log"\}' \| sha256sum$`), { how: 'here', state: 'none', stdout: new RegExp(`^${ARGS_HASH} `) }],
  [rx(String.raw`\$T workflow (query|update execute) --workflow-id hard-1 `), { how: 'here', state: 'budget' }],
  [rx(String.raw`bin/agent-harness\.mjs raise-budget hard-1 `), { how: 'test', file: 'test/hard-budget.test.ts', contains: ["'raise-budget'", "'--to'"] }],
  [rx(String.raw`${CLI} (fork|export) `), { how: 'test', file: 'test/fork.test.ts', contains: ["'fork'", "'--at-turn'", "'export'", "'--from-file'"] }],
  [rx(String.raw`temporal workflow start --type agentRun --task-queue agent-harness --input '\{"forkFrom"`), { how: 'test', file: 'test/fork.test.ts', contains: ["'workflow', 'start'", 'forkFrom'] }],
  // docs/structured-output.md: a run with outputSchema and modelSettings from ops tooling
  [rx(String.raw`temporal workflow start --type agentRun --task-queue agent-harness --workflow-id timeout-1 --input '\{"task"`), { how: 'test', file: 'test/structured-output.test.ts', contains: ["'workflow', 'start'", 'outputSchema', 'modelSettings'] }],
  // docs/cost.md: the price file with a real provider's model
  [rx(String.raw`AGENT_MODEL_PRICES='\{"claude-sonnet-4-5"`), { how: 'test', file: 'test/model-prices.test.ts', contains: ["readFileSync(new URL('../docs/cost.md'", 'modelPricesFromEnv(value)'] }],
  // docs/tools.md: a run started from ops tooling with the caller's runContext
  [rx(String.raw`temporal workflow start --type agentRun --task-queue support --input '\{"task": "Why was ticket 4711 closed\?", "runContext"`), { how: 'test', file: 'test/agent-definition.test.ts', contains: ["'workflow', 'start'", 'runContext'] }],
  [rx(String.raw`temporal workflow list --query 'AgentForkOf="RUN"'`), { how: 'test', file: 'test/fork.test.ts', contains: ['AgentForkOf="'] }],
  [rx(String.raw`temporal workflow update execute -w RUN --name reconcile `), { how: 'test', file: 'test/reconcile.test.ts', contains: ["'update', 'execute'", "'reconcile'", 'happened'] }],
  [rx(String.raw`bin/agent-harness\.mjs reconcile RUN c2 --retry`), { how: 'test', file: 'test/reconcile.test.ts', contains: ["['reconcile', handle.workflowId, 'c2', '--retry'"] }],
  // docs/security.md: signed decisions
  [rx(String.raw`bin/agent-harness\.mjs approve --query `), { how: 'test', file: 'test/attacks/batch-decisions.test.ts', contains: ["'approve', '--query'"] }],
  [rx(String.raw`bin/agent-harness\.mjs keygen --out `), { how: 'test', file: 'test/signed-decisions.test.ts', contains: ["main(['keygen', '--out'"] }],
  [rx(String.raw`AGENT_APPROVERS=\S+ npm run worker$`), { how: 'test', file: 'test/signed-decisions.test.ts', contains: ['pluginOptionsFromEnv({ AGENT_APPROVERS'] }],
  [rx(String.raw`bin/agent-harness\.mjs (approve|reject) signed-42 c2 --by alice --key `), { how: 'test', file: 'test/signed-decisions.test.ts', contains: ["'approve', id, 'c2', '--by', 'alice', '--key'", "'reject', id, 'c2', '--by', 'alice', '--key'"] }],
  [rx(String.raw`\$T workflow (update execute|signal) -w signed-42 --name (decide|approve) `), { how: 'test', file: 'test/signed-decisions.test.ts', contains: ["'workflow', 'update', 'execute'", "'--name', 'decide'", "'workflow', 'signal'"] }],
  // docs/tools.md: MCP servers
  [rx(String.raw`AGENT_MCP_CONFIG=mcp\.json npm run mcp:tools`), { how: 'test', file: 'test/mcp.test.ts', contains: ["'worker/mcp-tools.ts'", 'AGENT_MCP_CONFIG: config'] }],
  [rx(String.raw`AGENT_MCP_CONFIG=mcp\.json AGENT_TASK_QUEUE=agent-harness-mcp npm run worker`), { how: 'test', file: 'test/mcp.test.ts', contains: ['startWorkerProcess', 'AGENT_MCP_CONFIG: config'] }],
  [rx(String.raw`AGENT_TASK_QUEUE=agent-harness-mcp bin/agent-harness\.mjs run --model mcp`), { how: 'test', file: 'test/mcp.test.ts', contains: ["model: 'mcp'", "'fs_write'"] }],
  // docs/deployment.md
  [rx(String.raw`TEMPORAL_PROFILE=cloud `), { how: 'test', file: 'test/profiles.test.ts', contains: ['TEMPORAL_PROFILE'] }],
  [rx(String.raw`(LLM_BASE_URL=\S+ LLM_API_KEY=\S+ )?docker compose `), { how: 'not-here', reason: NO_DOCKER }],
  [rx(String.raw`WORKER_DEPLOYMENT_NAME=agent-harness WORKER_BUILD_ID=v2 npm run worker$`), { how: 'test', file: 'test/worker-versioning.test.ts', contains: ['WORKER_DEPLOYMENT_NAME: deploymentName, WORKER_BUILD_ID: buildId'] }],
  [rx(String.raw`\$T worker deployment describe-version `), { how: 'test', file: 'test/worker-versioning.test.ts', contains: ['describeWorkerDeploymentVersion('] }],
  [rx(String.raw`\$T worker deployment set-current-version `), { how: 'test', file: 'test/worker-versioning.test.ts', contains: ['setWorkerDeploymentCurrentVersion('] }],
  [rx(String.raw`\$T worker deployment describe --name `), { how: 'test', file: 'test/worker-versioning.test.ts', contains: ['describeWorkerDeployment('] }],
  [rx(String.raw`(npm start -- --real|npm run model|npm run experiments -- --real|LLM_BASE_URL=http://127\.0\.0\.1:8081/v1 LLM_MODEL=smollm2-135m-instruct npm run worker)`), { how: 'not-here', reason: REAL_MODEL }],
  // docs/cluster.md and docs/effects.md
  [rx(String.raw`npm run cluster:install`), { how: 'test', file: '.ci/run', contains: ['npm run cluster:install'] }],
  [rx(String.raw`npm run test:cluster`), { how: 'test', file: '.ci/run', contains: ['\nnpm run test:cluster\n'] }],
  [rx(String.raw`npm run cluster( |$)`), { how: 'test', file: 'test/cluster/global-setup.ts', contains: ['startCluster('] }],
  [rx(String.raw`npm run provider$`), { how: 'flow', flow: 'provider' }],
  [rx(String.raw`TEMPORAL_ADDRESS=127\.0\.0\.1:7233 npm run (worker|cli -- run --model plan)$`), { how: 'test', file: 'test/cluster/two-workers.test.ts', contains: ['startWorkerProcess'] }],
  [rx(String.raw`AGENT_LEDGER_URL=postgres://`), { how: 'test', file: 'test/effects-hosts.test.ts', contains: ['AGENT_LEDGER_URL'] }],
];

const commands = documentedCommands();
const coverageOf = (c: DocCommand) => COVERAGE.find(([pattern]) => pattern.test(c.text));
const where = (c: DocCommand) => `${c.file}:${c.line}: ${c.text}`;

describe('every command of the README and docs/ is accounted for', () => {
  it('each is run here, run by a named test, or listed as not runnable here', () => {
    expect(commands.length).toBeGreaterThan(40);
    const unaccounted = commands.filter((c) => !coverageOf(c)).map(where);
    expect(unaccounted, 'commands no test runs: add them to COVERAGE in test/docs-commands.test.ts').toEqual([]);
    const stale = COVERAGE.filter(([pattern]) => !commands.some((c) => pattern.test(c.text))).map(([p]) => String(p));
    expect(stale, 'entries that match no documented command').toEqual([]);
  });

  it.each(COVERAGE.filter(([, c]) => c.how === 'test').map(([p, c]) => [String(p), c]))('%s: the test that runs it holds the invocation', (_p, coverage) => {
    if (coverage.how !== 'test') throw new Error('unreachable');
    const file = join(PROJECT_ROOT, coverage.file);
    expect(existsSync(file), coverage.file).toBe(true);
    const text = readFileSync(file, 'utf8');
    for (const s of coverage.contains) expect(text, `${coverage.file} should contain ${s}`).toContain(s);
  });
});

/** What replaces the example's ids: a workflow id of this file's own, in the state the command needs. */
async function prepare(state: State): Promise<string> {
  const id = `docs-${state}-${randomUUID().slice(0, 8)}`;
  if (state === 'parked') {
    await waitForApproval(await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() }, id), 'c2');
  } else if (state === 'finished') {
    await (await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }, id)).result();
  } else if (state === 'budget') {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace(), limits: { maxBudgetUsd: 0.004, budgetMode: 'hard' } }, id);
    await waitFor(`${id} to park on its budget`, async () => ((await handle.query(statusQuery)) as RunStatusView).interruption?.type === 'budget');
  }
  return id;
}

/** The documented command as this file runs it: its block's variables set, the example's ids and queue replaced. */
function asRunHere(c: DocCommand, id: string, queue: string): string {
  const text = c.text
    .replace(/\b(run-42|RUN_ID|hard-1|RUN)\b/g, id)
    .replace(/--task-queue agent-harness(?=\s)/g, `--task-queue ${queue}`)
    .replace(/\bagent-harness-notes\b/g, queue);
  return [...c.setup, text].join('; ');
}

function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${dirname(findTemporalCli())}:${process.env.PATH ?? ''}`,
    TEMPORAL_ADDRESS: h.address,
    AGENT_TASK_QUEUE: h.taskQueue,
    TRACE_DIR: h.traceDir,
    ...extra,
  };
}

async function sh(command: string, env: NodeJS.ProcessEnv, timeout = 90_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return execShell(command, { cwd: PROJECT_ROOT, env, shell: '/bin/bash', timeout }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
}

describe('the commands run here, as written', () => {
  const here = commands.flatMap((c) => {
    const coverage = coverageOf(c)?.[1];
    return coverage?.how === 'here' ? [[where(c), c, coverage] as const] : [];
  });

  it.each(here)('%s', { timeout: 120_000 }, async (_name, c, coverage) => {
    const id = await prepare(coverage.state);
    const r = await sh(asRunHere(c, id, h.taskQueue), shellEnv());
    expect(r.code, `${c.text}\n${r.stdout}${r.stderr}`).toBe(coverage.exit ?? 0);
    if (coverage.stdout) expect(r.stdout).toMatch(coverage.stdout);
  });
});

/** A process the manual starts in a terminal of its own: its output so far, and a way to stop it and all it started. */
function background(command: string, env: NodeJS.ProcessEnv) {
  const child = spawn('/bin/bash', ['-c', command], { cwd: PROJECT_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    output: () => out,
    exited,
    stop() {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      return exited;
    },
  };
}

const byFlow = (flow: string) => commands.filter((c) => {
  const coverage = coverageOf(c)?.[1];
  return coverage?.how === 'flow' && coverage.flow === flow;
});
const one = (flow: string, pattern: RegExp): DocCommand => {
  const found = byFlow(flow).filter((c) => pattern.test(c.text));
  expect(found.length, `${flow}: ${String(pattern)}`).toBeGreaterThan(0);
  return found[0];
};

describe('the README, screen by screen', () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('approve a run: npm start parks on the deletion, a second terminal reads its status and approves, npm start ends completed', { timeout: 240_000 }, async () => {
    const queue = `docs-start-${randomUUID().slice(0, 8)}`;
    h.replayQueue(queue);
    const env = shellEnv({
      AGENT_TASK_QUEUE: queue,
      PORT: String(await findFreePort()),
      CODEC_PORT: String(await findFreePort()),
      METRICS_PORT: 'off',
      AGENT_WORKSPACE: mkdtempSync(join(tmpdir(), 'docs-ws-')),
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    });
    const start = one('approve-readme', /^npm start/);
    const stack = background(start.text, env);
    stops.push(() => stack.stop());
    const id = await waitFor('npm start to park on c2', () => {
      const out = stack.output();
      return out.includes('approval required: delete_file') ? /^run (\S+) started/m.exec(out)?.[1] : null;
    }, 180_000);
    expect(stack.output()).toContain(`approve: npx agent-harness approve ${id} c2`);

    const status = await sh(asRunHere(one('approve-readme', /status RUN_ID/), id, queue), env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('c2');
    const approve = await sh(asRunHere(one('approve-readme', /approve RUN_ID c2/), id, queue), env);
    expect(approve.code, approve.stdout + approve.stderr).toBe(0);

    expect(await stack.exited, stack.output()).toBe(0);
    expect(stack.output()).toContain('approved by alice');
    expect(stack.output()).toMatch(/status=completed\n$/);
  });

  it('your own tool: a worker offering examples/tools/notes.ts, and the script scenario driving it through the CLI', { timeout: 240_000 }, async () => {
    const workerCommand = one('own-tool', /npm run worker$/);
    // `npm run worker` is worker/main.ts, which startWorkerProcess runs, with the command's variables.
    expect(JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts.worker).toBe('exec tsx worker/main.ts');
    const modules = /AGENT_TOOLS_MODULES=(\S+)/.exec(workerCommand.text)?.[1];
    expect(modules).toBe('examples/tools/notes.ts');
    const queue = `docs-notes-${randomUUID().slice(0, 8)}`;
    const worker: WorkerProcess = await startWorkerProcess({ taskQueue: queue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { AGENT_TOOLS_MODULES: modules! } });
    stops.push(() => worker.kill());

    for (const run of byFlow('own-tool').filter((c) => /--model script/.test(c.text))) {
      const r = await sh(asRunHere(run, '', queue), shellEnv());
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('answer: Done. The last tool said: tmp/a.txt: 3 words');
    }
  });

  it('npm run provider: the scripted provider answers on PORT', { timeout: 120_000 }, async () => {
    const port = await findFreePort();
    const provider = background(one('provider', /npm run provider/).text, shellEnv({ PORT: String(port) }));
    stops.push(() => provider.stop());
    await waitFor('the provider to listen', () => provider.output().includes(`scripted provider listening on http://127.0.0.1:${port}`));
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'plan', messages: [{ role: 'user', content: 'Which file mentions a timeout?' }] }),
    });
    expect(res.status).toBe(200);
    await provider.stop();
  });
});

describe('the configuration reference', () => {
  const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'configuration.md'), 'utf8');
  const defaultOf = (field: string) => new RegExp(`^\\| \`${field.replace(/[.]/g, '\\.')}\` \\| ([^|]+) \\|`, 'm').exec(doc)?.[1].trim();

  it('the input table shows the defaults of common/defaults.ts', () => {
    const d = BUILT_IN_DEFAULTS;
    expect(defaultOf('model')).toBe(`\`${d.model}\``);
    expect(defaultOf('limits.maxTurns')).toBe(`\`${d.maxTurns}\``);
    expect(defaultOf('limits.maxBudgetUsd')).toBe(`\`${d.maxBudgetUsd!.toFixed(1)}\``);
    expect(defaultOf('toolErrors')).toBe(`\`${d.toolErrors}\``);
    expect(defaultOf('dedupe')).toBe(`\`${d.dedupe}\``);
    expect(defaultOf('workspace')).toBe(`\`${d.workspace}\``);
    // A real model's price is the worker's (AGENT_MODEL_PRICES); the built-in rate is the scripted scenarios'.
    expect(defaultOf('pricing')).toContain(`\`${JSON.stringify({ inputPerMTokUsd: d.pricing.inputPerMTokUsd, outputPerMTokUsd: d.pricing.outputPerMTokUsd })}\``);
    expect(defaultOf('pricing')).toContain('AGENT_MODEL_PRICES');
    expect(defaultOf('modelTimeoutMs` / `toolTimeoutMs')).toBe(`\`${d.modelTimeoutMs}\` / \`${d.toolTimeoutMs}\``);
    expect(defaultOf('limits.minReplyTokens` / `limits.maxReplyTokens')).toBe(`\`${DEFAULT_MIN_REPLY_TOKENS}\` / \`${DEFAULT_MAX_REPLY_TOKENS}\``);
    expect(defaultOf('maxToolResultChars')).toBe(`\`${d.maxToolResultChars}\``);
    expect(defaultOf('continueAsNewAtHistoryBytes')).toBe(`\`${d.continueAsNewAtHistoryBytes}\` (4 MiB)`);
    expect(defaultOf('approvalTimeoutMs')).toMatch(/^none/);
    expect(d.approvalTimeoutMs).toBeNull();
  });
});

describe('the links of the README and docs/', () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
  const headings = (file: string) =>
    new Set([...readFileSync(join(PROJECT_ROOT, file), 'utf8').matchAll(/^#{1,6} (.*)$/gm)].map((m) => slug(m[1])));

  it('every relative link names a file that exists, and a heading of it', () => {
    const broken: string[] = [];
    for (const file of DOC_FILES) {
      const prose = readFileSync(join(PROJECT_ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, link] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link)) continue;
        const [path, anchor] = link.split('#');
        const target = path ? join(dirname(file), path) : file;
        if (!existsSync(join(PROJECT_ROOT, target))) broken.push(`${file}: ${link} (no such file)`);
        else if (anchor && target.endsWith('.md') && !headings(target).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
