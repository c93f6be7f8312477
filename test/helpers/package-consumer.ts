// A project outside this repository that installs the package from the
// tarball `npm pack` makes: what test/package.test.ts checks and
// bench/package.ts measures. Everything it runs is plain `node`, `npm` and
// `tar`; the consumer has its own node_modules and sees only the exports.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export const PACKAGE = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  engines: { node: string };
  peerDependencies: Record<string, string>;
  exports: Record<string, string | { types: string; import: string }>;
  scripts: Record<string, string>;
};

/** The subpaths a consumer imports (`./workflow` → `temporal-agent-harness/workflow`), package.json left out. */
export const ENTRIES = Object.keys(PACKAGE.exports)
  .filter((k) => k !== './package.json')
  .map((k) => `${PACKAGE.name}/${k.slice(2)}`);

export interface Packed {
  tarball: string;
  /** Paths inside the package, as `npm pack` lists them. */
  files: string[];
  /** The tarball's size in bytes, and its contents' unpacked. */
  size: number;
  unpackedSize: number;
}

/**
 * The environment of every child npm: the caller's, less what an enclosing
 * `npm test` put there (npm_config_*, npm_lifecycle_*), which would otherwise
 * configure the consumer's install as this repository's.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
}

export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return r;
}

export function mustRun(cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const r = run(cmd, args, cwd, env);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * `npm run build`, the published package staged by scripts/stage-package.mjs
 * (its package.json stripped to what a consumer reads), then `npm pack` of the
 * staged folder into `dir`: what `npm run package` makes and publishing sends.
 */
export function buildAndPack(dir: string): Packed {
  mustRun('npm', ['run', 'build'], PROJECT_ROOT);
  mkdirSync(dir, { recursive: true });
  const stage = join(dir, 'stage');
  mustRun(process.execPath, [join(PROJECT_ROOT, 'scripts', 'stage-package.mjs'), stage], PROJECT_ROOT);
  const out = mustRun('npm', ['pack', '--json', '--pack-destination', dir, stage], dir);
  const [report] = JSON.parse(out) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  return { tarball: join(dir, report.filename), files: report.files.map((f) => f.path).sort(), size: report.size, unpackedSize: report.unpackedSize };
}

/**
 * The consumer's files: a workflows module re-exporting `agentRun` and running
 * it as a child, a worker module with a tool that closes over the project's own
 * data, and a client module. Typed against the package's declarations.
 */
const CONSUMER_SOURCES: Record<string, string> = {
  'src/workflows.ts': `import { executeChild } from '@temporalio/workflow';
import { agentRun } from '${PACKAGE.name}/workflow';
import type { AgentInput, RunResult } from '${PACKAGE.name}/client';

export { agentRun };

export async function triage(task: string): Promise<RunResult> {
  const input: AgentInput = { task, model: 'plan', limits: { maxTurns: 5 } };
  return executeChild(agentRun, { args: [input] });
}
`,
  'src/worker.ts': `import { AgentPlugin, type AgentPluginOptions } from '${PACKAGE.name}/worker';
import { defineTool, ToolError, type ToolContext } from '${PACKAGE.name}/tools';

const notes = new Map<string, string>();

export const remember = defineTool({
  name: 'remember',
  description: 'Keep a note in the process memory.',
  parameters: { type: 'object', properties: { key: { type: 'string' }, text: { type: 'string' } }, required: ['key', 'text'], additionalProperties: false },
  readOnly: false,
  idempotent: true,
  async run(_ctx: ToolContext, { key, text }) {
    if (key === '') throw new ToolError('the key is empty');
    notes.set(key, text);
    return \`kept \${key} (\${notes.size} notes)\`;
  },
});

export const plugin = (baseUrl: string, workspace: string): AgentPlugin => new AgentPlugin({ tools: [remember], model: { baseUrl }, workspace });
export type Options = AgentPluginOptions;
`,
  'src/client.ts': `import { connectClient, DEFAULT_TASK_QUEUE, type RunResult, type RunStatusView } from '${PACKAGE.name}/client';
import { startScriptedModel, type RunningScriptedModel } from '${PACKAGE.name}/testing';

export const queue: string = DEFAULT_TASK_QUEUE;
export const connect: typeof connectClient = connectClient;
export const model: () => Promise<RunningScriptedModel> = () => startScriptedModel({ latencyMs: 0 });
export type Seen = RunResult | RunStatusView;
// @ts-expect-error: modules past the exports are internal, not part of the package's surface
export const internal = () => import('${PACKAGE.name}/dist/node/config.js');
`,
  // Under plain node: the SDK's bundler on the consumer's workflows module.
  'bundle.mjs': `import { bundleWorkflowCode } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
const quiet = () => {};
const { code } = await bundleWorkflowCode({
  workflowsPath: fileURLToPath(new URL('./src/workflows.ts', import.meta.url)),
  logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: console.warn, error: console.error },
});
// Each copy of @temporalio/workflow the bundle holds shows as its own path to that package's lib/:
// each found with indexOf, its folder read back char by char. (A regex for the whole path, tried
// from every position of the 6 MB bundle, is quadratic over its long runs of path-like characters:
// it ran for minutes.)
const MARKER = 'node_modules/@temporalio/workflow/lib/';
const copies = new Set();
for (let at = code.indexOf(MARKER); at !== -1; at = code.indexOf(MARKER, at + 1)) {
  let start = at;
  while (start > 0 && /[\\w@.\\/-]/.test(code[start - 1])) start--;
  copies.add(code.slice(start, at).replace(/^\\/+/, '') + 'node_modules/@temporalio/workflow');
}
console.log(JSON.stringify({ bytes: code.length, harnessModules: code.match(/${PACKAGE.name}\\/dist\\/workflows\\/[a-z-]+\\.js/g)?.length ?? 0, workflowCopies: [...copies].sort() }));
`,
  // Under plain node: the testing kit's provider answers a scripted turn.
  'scripted.mjs': `import { startScriptedModel } from '${PACKAGE.name}/testing';
const model = await startScriptedModel();
const res = await fetch(\`\${model.baseUrl}/chat/completions\`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'plan', messages: [{ role: 'user', content: 'Plan.' }] }),
});
const body = await res.json();
await model.close();
console.log(JSON.stringify({ status: res.status, finish: body.choices?.[0]?.finish_reason }));
`,
};

export interface Consumer {
  dir: string;
  /** The package as installed: node_modules/temporal-agent-harness. */
  installed: string;
  installMs: number;
  installOutput: string;
}

/**
 * A fresh project in `dir` that installs `tarball` as its one dependency.
 * It approves the package's install scripts (npm 11 blocks a dependency's
 * otherwise), so any the package had would run here, and show. The
 * harness's own dependencies come from npm's cache when it holds them.
 */
export function installConsumer(dir: string, tarball: string): Consumer {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'harness-consumer',
        private: true,
        type: 'module',
        // The two third-party scripts this repository's package.json declines too (README, "Dependencies and why").
        // The package itself is not listed: it has no install script, so npm has nothing to warn about.
        allowScripts: { protobufjs: false, '@swc/core': false },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022'],
        strict: true,
        noEmit: true,
        // The declarations are checked too: an error in them is the package's.
        skipLibCheck: false,
        types: ['node'],
        // The consumer's own @types/node would be an install of its own; this repository's is the same.
        typeRoots: [join(PROJECT_ROOT, 'node_modules', '@types')],
      },
      include: ['src'],
    }),
  );
  for (const [path, text] of Object.entries(CONSUMER_SOURCES)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const started = performance.now();
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], dir);
  const installMs = performance.now() - started;
  if (r.status !== 0) throw new Error(`npm install of the tarball failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return { dir, installed: join(dir, 'node_modules', PACKAGE.name), installMs, installOutput: r.stdout + r.stderr };
}

/** Every installed copy of package `name` under `dir`'s node_modules (nested ones included), as paths relative to `dir`. */
export function installedCopies(dir: string, name: string): string[] {
  const out: string[] = [];
  const walk = (nm: string) => {
    if (!existsSync(nm)) return;
    for (const entry of readdirSync(nm)) {
      if (entry.startsWith('.')) continue;
      const scoped = entry.startsWith('@') ? readdirSync(join(nm, entry)).map((n) => `${entry}/${n}`) : [entry];
      for (const pkg of scoped) {
        const at = join(nm, pkg);
        if (pkg === name) out.push(relative(dir, at));
        walk(join(at, 'node_modules'));
      }
    }
  };
  walk(join(dir, 'node_modules'));
  return out.sort();
}

/** The size on disk of `dir` in bytes (du's apparent sizes would hide the block overhead a team pays). */
export function diskBytes(dir: string): number {
  return Number(mustRun('du', ['-sk', dir], dir).split('\t')[0]) * 1024;
}

/** Every file under `dir`, relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/** The consumer's type check: tsc's errors in its own files and in the package's declarations (other packages' are theirs). */
export function typeErrors(consumer: Consumer, node: string = process.execPath, project: string = consumer.dir): string[] {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = run(node, [tsc, '-p', project, '--pretty', 'false'], consumer.dir);
  const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
  return errors.filter((l) => !l.startsWith('node_modules/') || l.startsWith(`node_modules/${PACKAGE.name}/`));
}

/**
 * The Node releases `engines` proves: the lowest of each line it allows
 * (`^20.19.0 || ^22.12.0 || ^24.11.0` → 20.19.0, 22.12.0, 24.11.0), each of
 * which the package test runs the consumer on.
 */
export function provenNodeVersions(): string[] {
  return PACKAGE.engines.node.split('||').map((alt) => {
    const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(alt.trim());
    if (!m) throw new Error(`engines.node is ${PACKAGE.engines.node}: expected "^MAJOR.MINOR.PATCH" alternatives joined by ||`);
    return `${m[1]}.${m[2]}.${m[3]}`;
  });
}

/**
 * A `node` binary of `version`, from the npm registry's `node-<os>-<arch>`
 * package (the official build, nothing else), cached per machine in
 * ~/.cache/agent-harness. Linux and macOS only; elsewhere null.
 */
export function nodeBinary(version: string): string | null {
  if (process.platform !== 'linux' && process.platform !== 'darwin') return null;
  const name = `node-${process.platform}-${process.arch}`;
  const dir = join(process.env.NODE_CACHE_DIR || join(homedir(), '.cache', 'agent-harness'), `${name}-${version}`);
  const bin = join(dir, 'node');
  if (existsSync(bin)) return bin;
  const tmp = `${dir}.part`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const out = mustRun('npm', ['pack', '--json', `${name}@${version}`, '--pack-destination', tmp], tmp);
  const [report] = JSON.parse(out) as { filename: string }[];
  mustRun('tar', ['xzf', join(tmp, report.filename), '-C', tmp, 'package/bin/node'], tmp);
  mkdirSync(dir, { recursive: true });
  renameSync(join(tmp, 'package', 'bin', 'node'), bin);
  rmSync(tmp, { recursive: true, force: true });
  return bin;
}
