// Hostile installs against the @temporalio version check
// (node/temporal-versions.ts): what a broken or odd node_modules holds
// must be refused naming the package, never passed and never a stack trace.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { satisfies, temporalVersionProblem, workerSdkPackages } from '../../node/temporal-versions.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A project whose node_modules holds these package.json texts (null: the package is absent). */
function projectWith(manifests: Record<string, string | null>): string {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-versions-attack-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(manifests)) {
    if (text === null) continue;
    mkdirSync(join(dir, 'node_modules', name), { recursive: true });
    writeFileSync(join(dir, 'node_modules', name, 'package.json'), text);
  }
  return pathToFileURL(join(dir, 'index.js')).href;
}
const good = (): Record<string, string | null> => Object.fromEntries(workerSdkPackages().map((n) => [n, JSON.stringify({ name: n, version: '1.24.0' })]));

describe('the @temporalio version check under hostile installs', () => {
  it('a prerelease of the right line is not the release the suite ran', () => {
    expect(satisfies('1.24.0-rc.1', '~1.24.0')).toBe(false);
    expect(temporalVersionProblem(['@temporalio/client'], projectWith({ ...good(), '@temporalio/client': JSON.stringify({ version: '1.24.1-rc.0' }) }))).toContain('has 1.24.1-rc.0');
  });

  it('a version that is not a version, or none, is refused naming the package', () => {
    for (const version of ['latest', '', '1.24', '../../1.24.0', 'v1.24.0.0']) {
      const problem = temporalVersionProblem(['@temporalio/worker'], projectWith({ ...good(), '@temporalio/worker': JSON.stringify({ version }) }));
      expect(problem, version).toContain('@temporalio/worker');
    }
  });

  it('a missing peer, or an unreadable package.json, is refused with the install command', () => {
    expect(temporalVersionProblem(workerSdkPackages(), projectWith({ ...good(), '@temporalio/plugin': null }))).toMatch(/needs @temporalio\/plugin .* not installed: npm install @temporalio\/plugin@/);
    expect(temporalVersionProblem(['@temporalio/common'], projectWith({ ...good(), '@temporalio/common': '{ not json' }))).toContain('@temporalio/common');
  });

  it('a range form the check cannot read is an error naming it, not a pass', () => {
    expect(() => satisfies('1.24.0', '1.24.x')).toThrow(/"1\.24\.x" is not a form this check reads/);
    expect(() => satisfies('1.24.0', '>=1.24.0 ||')).toThrow(/empty alternative/);
  });
});
