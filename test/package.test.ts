// The package as a team gets it: built, packed by `npm pack`, installed from
// the tarball into a project of its own, and used there under plain `node`
// (no tsx, no TypeScript at run time) on the lowest Node release `engines`
// allows as well as this one. Its figures (size, install time, bundle size)
// are bench/package.ts's, not asserted here.
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildAndPack,
  cleanEnv,
  ENTRIES,
  filesUnder,
  installConsumer,
  lowestNodeVersion,
  nodeBinary,
  PACKAGE,
  run,
  typeErrors,
  type Consumer,
  type Packed,
} from './helpers/package-consumer.js';

/** A name each entry must export: the ones the contract fixes (README, "As a package"). */
const MUST_EXPORT: Record<string, string[]> = {
  workflow: ['agentRun'],
  worker: ['AgentPlugin'],
  tools: ['defineTool', 'ToolError'],
  client: ['AgentClient', 'agentDataConverter', 'connectClient'],
  testing: ['startScriptedModel'],
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

function expectEveryEntry(found: Record<string, string[]>) {
  expect(Object.keys(found).sort()).toEqual(Object.keys(MUST_EXPORT).sort());
  for (const [entry, names] of Object.entries(MUST_EXPORT)) expect(found[entry], entry).toEqual(expect.arrayContaining(names));
}

describe('the packed package', () => {
  // dist/common/failure-converter.cjs: Temporal loads a failure converter by path with require(), so it ships as CommonJS (node/codec-plugin.ts).
  it('holds the compiled code, its declarations, the bin and the docs, and no install script', () => {
    const stray = packed.files.filter((f) => !/^(dist\/.+\.(js|cjs|d\.ts)|bin\/agent-harness\.mjs|README\.md|CHANGELOG\.md|package\.json)$/.test(f));
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
    // The consumer approves the package's scripts, so a script it had would have run and left files here.
    expect(filesUnder(consumer.installed)).toEqual(packed.files);
    expect(existsSync(join(consumer.installed, '.temporal')), 'the Temporal CLI is provisioned for this repository only').toBe(false);
    expect(consumer.installOutput).not.toMatch(new RegExp(`${PACKAGE.name}@[^ ]+ \\((preinstall|install|postinstall):`));
    // Nothing in dist needs tsx, so the package does not bring it.
    expect(existsSync(join(consumer.dir, 'node_modules', 'tsx'))).toBe(false);
  });

  it('loads every export under plain node', () => {
    expectEveryEntry(exportsUnder());
  });

  it("type-checks a consumer's workflows, worker and client modules against its declarations", () => {
    expect(typeErrors(consumer), 'tsc errors in the consumer or in the package declarations').toEqual([]);
  }, 300_000);

  it("is bundled by the SDK's bundler from a workflows module that re-exports agentRun (no Node built-ins reach it)", () => {
    // bundleWorkflowCode refuses a bundle that imports a Node built-in, so a clean exit is the check.
    const r = nodeIn(['bundle.mjs']);
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const { bytes, harnessModules } = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { bytes: number; harnessModules: number };
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

  const lowest = lowestNodeVersion();
  it.skipIf(process.platform !== 'linux' && process.platform !== 'darwin')(
    `works on the lowest Node release engines allows (${lowest}): exports, bundle, scripted model, bin`,
    () => {
      const bin = nodeBinary(lowest);
      if (!bin) throw new Error(`no node ${lowest} binary for ${process.platform}-${process.arch}`);
      expect(run(bin, ['--version'], consumer.dir).stdout.trim()).toBe(`v${lowest}`);
      expectEveryEntry(exportsUnder(bin));
      const bundle = nodeIn(['bundle.mjs'], bin);
      expect(bundle.status, bundle.stderr).toBe(0);
      const scripted = nodeIn(['scripted.mjs'], bin);
      expect(scripted.status, scripted.stderr).toBe(0);
      const help = nodeIn([join(consumer.installed, 'bin', 'agent-harness.mjs'), '--help'], bin);
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage: agent-harness <command>/);
    },
    300_000,
  );
});
