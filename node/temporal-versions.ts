// The @temporalio versions this package runs with. They are peer
// dependencies (package.json `peerDependencies`, the ranges the suite
// proves), so a team's project holds one copy of each SDK package, its own.
// A project on another version type-checks badly and, at run time, gets a
// worker that says "ready" and then fails every workflow task (two SDK
// generations disagree on private class members): runs hang with nothing
// said. So a worker (AgentPlugin) and a client (connectClient, AgentClient)
// read the installed SDK versions when they are made and refuse, in one
// line naming both versions, one outside the range. Not for workflow code:
// it reads files.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root.js';

/** The SDK packages a client needs; a worker needs all of them. */
export const CLIENT_SDK_PACKAGES = ['@temporalio/client', '@temporalio/common', '@temporalio/proto'] as const;

interface Manifest {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
}

type Version = [number, number, number];

function parseVersion(v: string): Version | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * Whether `version` satisfies `range`: the forms package.json's peers use
 * (`1.24.0`, `~1.24.0`, `^1.24.0`, `>=1.24.0 <1.26.0`, alternatives joined by
 * `||`). A form it does not know is an error, not a pass.
 */
export function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version);
  // A prerelease (1.25.0-rc.1) is not the release the suite ran: outside every range, as npm reads ranges without one.
  if (!v || /^v?\d+\.\d+\.\d+-/.test(version.trim())) return false;
  // Every alternative is read (map, then some): a malformed one is an error even when an earlier one matches.
  const fits = range.split('||').map((alt) => {
    const parts = alt.trim().split(/\s+/).filter(Boolean);
    if (parts.length === 0) throw new Error(`version range "${range}": an empty alternative`);
    return parts.every((part) => {
      const m = /^(>=|<=|>|<|=|~|\^)?(.+)$/.exec(part);
      const base = m ? parseVersion(m[2]) : null;
      if (!m || !base) throw new Error(`version range "${range}": "${part}" is not a form this check reads (x.y.z, ~x.y.z, ^x.y.z, >=, <)`);
      const c = compare(v, base);
      switch (m[1]) {
        case '>=':
          return c >= 0;
        case '<=':
          return c <= 0;
        case '>':
          return c > 0;
        case '<':
          return c < 0;
        case '~':
          return c >= 0 && v[0] === base[0] && v[1] === base[1];
        case '^':
          // 0.x: the minor is the breaking part, as npm reads it.
          return c >= 0 && v[0] === base[0] && (base[0] !== 0 || v[1] === base[1]);
        default:
          return c === 0;
      }
    });
  });
  return fits.some(Boolean);
}

/** This package's name, version and peer ranges, from its own package.json. */
function ownManifest(): Manifest {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as Manifest;
}

/**
 * The refusal for the first SDK package of `packages` whose installed
 * version (as node resolves it from this package, so the copy this code
 * runs with) is outside this package's peer range; null when all fit.
 * `resolveFrom` is the file resolution starts from (tests point it at a
 * project of their own).
 */
export function temporalVersionProblem(packages: readonly string[], resolveFrom: string = import.meta.url): string | null {
  const own = ownManifest();
  const peers = own.peerDependencies ?? {};
  const req = createRequire(resolveFrom);
  for (const name of packages) {
    const range = peers[name];
    if (!range) continue;
    let installed: Manifest;
    try {
      installed = JSON.parse(readFileSync(req.resolve(`${name}/package.json`), 'utf8')) as Manifest;
    } catch {
      return `${own.name} ${own.version} needs ${name} ${range} (a peer dependency), and it is not installed: npm install ${name}@"${range}"`;
    }
    if (!satisfies(installed.version, range)) {
      return `${own.name} ${own.version} supports ${name} ${range}, and this project has ${installed.version}: install @temporalio/* of a version in ${range} (every @temporalio package at one version)`;
    }
  }
  return null;
}

const checked = new Set<string>();

/** Throws the one-line refusal of temporalVersionProblem; each set of packages is read once per process. */
export function assertTemporalVersions(packages: readonly string[]): void {
  const key = packages.join(',');
  if (checked.has(key)) return;
  const problem = temporalVersionProblem(packages);
  if (problem) throw new Error(problem);
  checked.add(key);
}

/** Every @temporalio peer of this package: what a worker runs with. */
export function workerSdkPackages(): string[] {
  return Object.keys(ownManifest().peerDependencies ?? {}).filter((n) => n.startsWith('@temporalio/'));
}
