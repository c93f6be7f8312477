// The @temporalio version check a worker and a client run when they are made
// (node/temporal-versions.ts): the ranges package.json's peers use, read as
// npm reads them, and the refusal for a project whose installed SDK is
// outside them: one line, both versions, against real package.json files of
// a project on disk (the package test does the same in an installed consumer).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { CLIENT_SDK_PACKAGES, satisfies, temporalVersionProblem, workerSdkPackages } from '../../node/temporal-versions.js';

const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: Record<string, string>; peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A project whose node_modules holds these @temporalio versions; the file resolution starts from. */
function projectWith(versions: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'temporal-versions-'));
  dirs.push(dir);
  for (const [name, version] of Object.entries(versions)) {
    mkdirSync(join(dir, 'node_modules', name), { recursive: true });
    writeFileSync(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
  }
  return pathToFileURL(join(dir, 'index.js')).href;
}

const all = (version: string) => Object.fromEntries(workerSdkPackages().map((n) => [n, version]));

describe('the supported @temporalio range', () => {
  it('is every @temporalio peer, at the range the suite runs (its devDependencies pin a version inside it)', () => {
    const peers = workerSdkPackages();
    expect(peers).toEqual(expect.arrayContaining(['@temporalio/client', '@temporalio/worker', '@temporalio/workflow', ...CLIENT_SDK_PACKAGES]));
    for (const name of peers) {
      expect(manifest.dependencies?.[name], `${name} is a peer, not a dependency`).toBeUndefined();
      expect(satisfies(manifest.devDependencies[name], manifest.peerDependencies[name]), name).toBe(true);
    }
  });

  it('reads the range forms as npm does', () => {
    expect(satisfies('1.24.0', '~1.24.0')).toBe(true);
    expect(satisfies('1.24.7', '~1.24.0')).toBe(true);
    expect(satisfies('1.25.0', '~1.24.0')).toBe(false);
    expect(satisfies('1.23.0', '~1.24.0')).toBe(false);
    expect(satisfies('1.30.0', '^1.24.0')).toBe(true);
    expect(satisfies('2.0.0', '^1.24.0')).toBe(false);
    expect(satisfies('0.3.1', '^0.3.0')).toBe(true);
    expect(satisfies('0.4.0', '^0.3.0')).toBe(false);
    expect(satisfies('1.25.3', '>=1.24.0 <1.26.0')).toBe(true);
    expect(satisfies('1.26.0', '>=1.24.0 <1.26.0')).toBe(false);
    expect(satisfies('1.23.0', '~1.22.0 || ~1.23.0')).toBe(true);
    expect(satisfies('1.24.0', '1.24.0')).toBe(true);
  });
});

describe('a project on another @temporalio version', () => {
  it('passes on the versions the package declares', () => {
    expect(temporalVersionProblem(workerSdkPackages(), projectWith(all('1.24.0')))).toBeNull();
  });

  it('is refused in one line naming the package, the supported range and the version it has', () => {
    const problem = temporalVersionProblem(workerSdkPackages(), projectWith({ ...all('1.24.0'), '@temporalio/workflow': '1.23.0' }));
    expect(problem).toBe(
      `${manifest.name} ${manifest.version} supports @temporalio/workflow ${manifest.peerDependencies['@temporalio/workflow']}, and this project has 1.23.0: install @temporalio/* of a version in ${manifest.peerDependencies['@temporalio/workflow']} (every @temporalio package at one version)`,
    );
    expect(problem).not.toContain('\n');
  });

  it('a client checks only what a client loads: a worker package of another version does not stop it', () => {
    const from = projectWith({ ...all('1.24.0'), '@temporalio/worker': '1.23.0' });
    expect(temporalVersionProblem(CLIENT_SDK_PACKAGES, from)).toBeNull();
    expect(temporalVersionProblem(workerSdkPackages(), from)).toContain('@temporalio/worker');
  });
});
