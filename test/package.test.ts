// The package as a team gets it: built, staged and packed as it is published
// (`npm run package`), installed from the tarball into a project of its own,
// and used there under plain `node` (no tsx, no TypeScript at run time) on
// this Node and on the lowest release of each line `engines` allows (20, 22,
// 24). Its figures (size, install time, bundle size)
// are bench/package.ts's, not asserted here.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildAndPack,
  cleanEnv,
  ENTRIES,
  filesUnder,
  installConsumer,
  installedCopies,
  nodeBinary,
  PACKAGE,
  provenNodeVersions,
  run,
  typeErrors,
  type Consumer,
  type Packed,
} from './helpers/package-consumer.js';
import { docFiles, documentedTypeScript } from './helpers/docs-commands.js';

/** A name each entry must export: the ones the contract fixes (README, "As a package"). */
const MUST_EXPORT: Record<string, string[]> = {
  workflow: ['agentRun'],
  worker: ['AgentPlugin'],
  tools: ['defineTool', 'ToolError'],
  client: ['AgentClient', 'agentDataConverter', 'connectClient'],
  testing: ['startScriptedModel', 'runTestWorker'],
};

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

let dir: string;
let packed: Packed;
let consumer: Consumer;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-harness-package-'));
  packed = buildAndPack(join(dir, 'pack'));
  consumer = installConsumer(join(dir, 'consumer'), packed.tarball);
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `node` (this one, or another binary) in the consumer's folder, with nothing preloaded. */
function nodeIn(args: string[], bin = process.execPath) {
  return run(bin, args, consumer.dir, cleanEnv());
}

/** Imports each entry under `bin` and answers the names each exports. */
function exportsUnder(bin = process.execPath): Record<string, string[]> {
  const script = `const out = {};
for (const e of ${JSON.stringify(ENTRIES)}) out[e.split('/').pop()] = Object.keys(await import(e)).sort();
console.log(JSON.stringify(out));`;
  const r = nodeIn(['--input-type=module', '-e', script], bin);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, string[]>;
}

interface Bundled {
  bytes: number;
  harnessModules: number;
  workflowCopies: string[];
}
let bundledOnce: Bundled | null = null;

/** The SDK's bundler on the consumer's workflows module under this node, once (minutes of CPU on a loaded machine). */
function bundled(): Bundled {
  if (bundledOnce) return bundledOnce;
  const r = nodeIn(['bundle.mjs']);
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  bundledOnce = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Bundled;
  return bundledOnce;
}

function expectEveryEntry(found: Record<string, string[]>) {
  expect(Object.keys(found).sort()).toEqual(Object.keys(MUST_EXPORT).sort());
  for (const [entry, names] of Object.entries(MUST_EXPORT)) expect(found[entry], entry).toEqual(expect.arrayContaining(names));
}

describe('the packed package', () => {
  // dist/common/failure-converter.cjs: Temporal loads a failure converter by path with require(), so it ships as CommonJS (node/codec-plugin.ts).
  it('holds the compiled code, its declarations, the bin and the docs, and no install script', () => {
    // dist/vendor/workflow-streams: @temporalio/workflow-streams' compiled lib with its LICENSE (scripts/vendor-workflow-streams.mjs).
    const stray = packed.files.filter(
      (f) => !/^(dist\/.+\.(js|cjs|d\.ts)|dist\/vendor\/workflow-streams\/(package\.json|LICENSE)|bin\/agent-harness\.mjs|docs\/[a-z-]+\.md|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/.test(f),
    );
    expect(stray, 'files a consumer does not need').toEqual([]);
    expect(packed.files.filter((f) => /(^|\/)(test|bench|experiments)\/|\.test\./.test(f))).toEqual([]);
    for (const e of Object.values(PACKAGE.exports)) {
      if (typeof e === 'string') continue;
      expect(packed.files, 'every export is in the tarball').toEqual(expect.arrayContaining([e.import.slice(2), e.types.slice(2)]));
    }
    const manifest = JSON.parse(readFileSync(join(consumer.installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s))).toEqual([]);
    // npm would add `node-gyp rebuild` as the install script of a package with one.
    expect(packed.files).not.toContain('binding.gyp');
  });

  it('installs as a dependency without running or writing anything of its own', () => {
    // Whatever the package had as an install script would run or be named in npm's warning; neither happens.
    expect(filesUnder(consumer.installed)).toEqual(packed.files);
    expect(existsSync(join(consumer.installed, '.temporal')), 'the Temporal CLI is provisioned for this repository only').toBe(false);
    expect(consumer.installOutput).not.toMatch(new RegExp(`${PACKAGE.name}@[^ ]+ \\((preinstall|install|postinstall):`));
    // Nothing in dist needs tsx, so the package does not bring it.
    expect(existsSync(join(consumer.dir, 'node_modules', 'tsx'))).toBe(false);
  });

  it('publishes a package.json with only what a consumer reads: no scripts, no overrides, a license, a repository', () => {
    const manifest = JSON.parse(readFileSync(join(consumer.installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    // The root's `prepare` (this repository's Temporal CLI) is what made npm warn in every consumer's install.
    for (const field of ['scripts', 'devDependencies', 'overrides', 'allowScripts']) expect(manifest, field).not.toHaveProperty(field);
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(consumer.installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(manifest.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/github\.com\//) });
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.peerDependencies).toEqual(PACKAGE.peerDependencies);
    // npm's install-scripts warning names a dependency whose scripts nobody approved; the consumer approves none of the package's.
    expect(consumer.installOutput).not.toMatch(/install-scripts|install script/i);
  });

  it("ships the docs the README links to, so its links work on npm's page and in node_modules", () => {
    const readme = readFileSync(join(consumer.installed, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((docs\/[a-z-]+\.md)(?:#[^)]*)?\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const link of new Set(links)) expect(existsSync(join(consumer.installed, link)), link).toBe(true);
  });

  it('holds one copy of each @temporalio package, in the consumer\'s node_modules and in its workflow bundle', () => {
    const sdk = Object.keys(PACKAGE.peerDependencies).filter((n) => n.startsWith('@temporalio/'));
    expect(sdk).toContain('@temporalio/workflow');
    for (const name of sdk) expect(installedCopies(consumer.dir, name), name).toEqual([`node_modules/${name}`]);
    // workflow-streams pins @temporalio/* exactly; it ships vendored in dist, so it brings no SDK of its own.
    expect(installedCopies(consumer.dir, '@temporalio/workflow-streams')).toEqual([]);
    const { workflowCopies } = bundled();
    expect(workflowCopies).toHaveLength(1);
    // The consumer's own copy (webpack names it relative to the project: ./node_modules/…), not one nested in another package.
    expect(workflowCopies[0]).toMatch(/^(\.\/|.*\/consumer\/)node_modules\/@temporalio\/workflow$/);
    expect(workflowCopies[0].match(/node_modules/g)).toHaveLength(1);
  }, 300_000);

  it('a worker or a client on an @temporalio version outside the peer range refuses at start, in one line naming both versions', () => {
    const range = PACKAGE.peerDependencies['@temporalio/worker'];
    const attempt = (entry: string, make: string) =>
      nodeIn(['--input-type=module', '-e', `const m = await import('${PACKAGE.name}/${entry}');
try { ${make}; console.log('made'); } catch (e) { console.log(e.message); process.exitCode = 3; }`]);
    for (const [sdkPackage, entry, make] of [
      ['@temporalio/worker', 'worker', `new m.AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:9' }, workspace: ${JSON.stringify(join(dir, 'workspace'))} })`],
      ['@temporalio/client', 'client', 'new m.AgentClient({ client: {} })'],
    ] as const) {
      const file = join(consumer.dir, 'node_modules', sdkPackage, 'package.json');
      const original = readFileSync(file, 'utf8');
      try {
        // What a team on 1.23.0 has, as node sees it (an install that ignored the peer range: --legacy-peer-deps, --force, another client).
        writeFileSync(file, JSON.stringify({ ...(JSON.parse(original) as object), version: '1.23.0' }));
        const r = attempt(entry, make);
        expect(r.status, r.stderr).toBe(3);
        const lines = r.stdout.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`${sdkPackage} ${range}`);
        expect(lines[0]).toContain('1.23.0');
      } finally {
        writeFileSync(file, original);
      }
      // The same project on the version it declares: made.
      expect(attempt(entry, make).stdout.trim()).toBe('made');
    }
  });

  // README.md and docs/ show a team's files; each TypeScript block is compiled as those files of an ESM project (the
  // package is ESM only) that installed the tarball, with the hidden `<!-- typecheck -->` lines above a block
  // declaring what it takes from the team's own code (test/helpers/docs-commands.ts, docFiles).
  it('compiles every TypeScript block of README.md and docs/ in the consumer, as shown', () => {
    const blocks = documentedTypeScript();
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    const root = join(consumer.dir, 'docs-check');
    for (const [path, text] of Object.entries(docFiles(blocks))) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['.'] }));
    expect(typeErrors(consumer, process.execPath, root), 'tsc errors in the docs\' blocks (docs-check/<doc>/<file>)').toEqual([]);
    // tsc accepts require() (@types/node declares it) but an ESM module has none at run time: the worker would not start.
    const inDeclarations = filesUnder(join(consumer.installed, 'dist')).filter((f) => f.endsWith('.d.ts') && /require(\.resolve)?\(/.test(readFileSync(join(consumer.installed, 'dist', f), 'utf8')));
    expect(blocks.filter((b) => /\brequire(\.resolve)?\(/.test(b.code)).map((b) => `${b.file}:${b.line}`)).toEqual([]);
    expect(inDeclarations, 'TSDoc examples in the declarations that use require').toEqual([]);
  }, 300_000);

  it('loads every export under plain node', () => {
    expectEveryEntry(exportsUnder());
  });

  it("type-checks a consumer's workflows, worker and client modules against its declarations", () => {
    expect(typeErrors(consumer), 'tsc errors in the consumer or in the package declarations').toEqual([]);
  }, 300_000);

  it("is bundled by the SDK's bundler from a workflows module that re-exports agentRun (no Node built-ins reach it)", () => {
    // bundleWorkflowCode refuses a bundle that imports a Node built-in, so a clean exit is the check (bundled()).
    const { bytes, harnessModules } = bundled();
    expect(bytes).toBeGreaterThan(0);
    expect(harnessModules, 'the bundle holds the package\'s workflow modules').toBeGreaterThan(0);
  }, 300_000);

  it("runs the testing kit's scripted model and the agent-harness bin under plain node", () => {
    const scripted = nodeIn(['scripted.mjs']);
    expect(scripted.status, scripted.stderr).toBe(0);
    expect(JSON.parse(scripted.stdout)).toEqual({ status: 200, finish: 'tool_calls' });
    const help = run(join(consumer.dir, 'node_modules', '.bin', 'agent-harness'), ['--help'], consumer.dir, cleanEnv());
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: agent-harness <command>/);
  });

  // The lowest release of each Node line engines allows: exports, types, bundle, scripted model, bin.
  for (const version of provenNodeVersions()) {
    it.skipIf(process.platform !== 'linux' && process.platform !== 'darwin')(
      `works on Node ${version}: loads every export, type-checks the consumer, bundles its workflows, runs the scripted model and the bin`,
      () => {
        const bin = nodeBinary(version);
        if (!bin) throw new Error(`no node ${version} binary for ${process.platform}-${process.arch}`);
        expect(run(bin, ['--version'], consumer.dir).stdout.trim()).toBe(`v${version}`);
        expectEveryEntry(exportsUnder(bin));
        expect(typeErrors(consumer, bin), `tsc under node ${version}`).toEqual([]);
        const bundle = nodeIn(['bundle.mjs'], bin);
        expect(bundle.status, bundle.stderr).toBe(0);
        const scripted = nodeIn(['scripted.mjs'], bin);
        expect(scripted.status, scripted.stderr).toBe(0);
        expect(JSON.parse(scripted.stdout)).toEqual({ status: 200, finish: 'tool_calls' });
        const help = nodeIn([join(consumer.installed, 'bin', 'agent-harness.mjs'), '--help'], bin);
        expect(help.status, help.stderr).toBe(0);
        expect(help.stdout).toMatch(/^usage: agent-harness <command>/);
      },
      300_000,
    );
  }
});
