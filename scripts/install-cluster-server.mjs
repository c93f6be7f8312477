#!/usr/bin/env node
// `npm run cluster:install`: provisions the production Temporal server that
// docker-compose.yml runs, for running it natively (npm run test:cluster,
// docs/cluster.md): `temporal-server` (cmd/server) and `temporal-sql-tool`
// (cmd/tools/sql) built from the Go module go.temporal.io/server at the very
// version of the compose file's temporalio/server and admin-tools images
// (read from docker-compose.yml, so the two cannot drift apart), plus the
// module's PostgreSQL schema files that the compose stack's
// deploy/compose/setup-postgres.sh applies.
//
// No Temporal image or release binary reaches this machine class; the Go
// module proxy does. CGO is off (a static binary, as Temporal ships it).
// The binaries and schema go to .temporal/cluster/v<version>/ (gitignored);
// modules and compiled packages stay in Go's own caches (GOMODCACHE, GOCACHE,
// per machine), so a fresh clone on a machine that built once only relinks.
//   - cache hit (binaries there and answering their version): a second or so;
//   - first build with empty Go caches: minutes on 2 cores (~3.5 on an idle
//     machine, 25 under heavy load), ~1.6 GB of modules downloaded (figures in
//     docs/cluster.md);
//   - fresh clone, warm Go caches: a relink, well under a minute.
// PostgreSQL comes from the machine: initdb and postgres on PATH or under
// /usr/lib/postgresql/N/bin; where they are missing and we are root with apt,
// Debian's postgresql package is installed (without its default cluster: the
// cluster code runs its own instance on a free port).
// Prints one JSON line on stdout: { version, server, sqlTool, schemaDir, pgBin }.
// TEMPORAL_SERVER_DIR points at another folder holding the same layout.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULE = 'go.temporal.io/server';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const log = (msg) => console.error(`[cluster-server] ${msg}`);

/** The server version of the compose stack: the tag of both Temporal images in docker-compose.yml. */
export function composeServerVersion(composeFile = join(root, 'docker-compose.yml')) {
  const text = readFileSync(composeFile, 'utf8');
  const tags = (image) => [...text.matchAll(new RegExp(`image:\\s*temporalio/${image}:(\\S+)`, 'g'))].map((m) => m[1]);
  const server = tags('server');
  const admin = tags('admin-tools');
  if (server.length !== 1) throw new Error(`${composeFile}: expected one temporalio/server image, found ${server.length}`);
  const bad = admin.filter((t) => t !== server[0]);
  if (admin.length === 0 || bad.length) {
    throw new Error(`${composeFile}: temporalio/admin-tools must have the server's tag ${server[0]} (found ${admin.join(', ') || 'none'}): its temporal-sql-tool writes the schema that server reads`);
  }
  if (!/^\d+\.\d+\.\d+$/.test(server[0])) throw new Error(`${composeFile}: temporalio/server:${server[0]} is not a release version (x.y.z)`);
  return server[0];
}

function versionOf(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : null;
}

function goVersion() {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error('no Go toolchain found: install Go (Debian: apt-get install golang, or go.dev/dl) to build the Temporal server');
  return r.stdout.trim();
}

/** Builds both binaries into `binDir` and copies the module's schema/ to `schemaDir`. */
function build(version, binDir, schemaDir) {
  const go = goVersion();
  log(`building ${MODULE}@v${version} (cmd/server, cmd/tools/sql) with ${go}, CGO off; the first build on a machine downloads ~1.6 GB of modules and takes minutes (docs/cluster.md)`);
  const started = Date.now();
  const tmp = mkdtempSync(join(dirname(binDir), '.build-'));
  try {
    const env = { ...process.env, CGO_ENABLED: '0', GOBIN: tmp, GOFLAGS: '-buildvcs=false', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local' };
    for (const cmd of ['cmd/server', 'cmd/tools/sql']) {
      const r = spawnSync('go', ['install', `${MODULE}/${cmd}@v${version}`], { env, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
      if (r.status !== 0) {
        const err = (r.stderr || '').trim();
        const hint = /requires go >= (\S+)/.exec(err);
        throw new Error(`go install ${MODULE}/${cmd}@v${version} failed${hint ? `: this server needs Go ${hint[1]}, the machine has ${go}` : ''}\n${err}`);
      }
    }
    // The module's own files (read-only in the module cache): only schema/ is used.
    const moduleDir = execFileSync('go', ['list', '-m', '-f', '{{.Dir}}', `${MODULE}@v${version}`], { env, encoding: 'utf8', cwd: tmp }).trim();
    mkdirSync(binDir, { recursive: true });
    renameSync(join(tmp, 'server'), join(binDir, 'temporal-server'));
    renameSync(join(tmp, 'sql'), join(binDir, 'temporal-sql-tool'));
    rmSync(schemaDir, { recursive: true, force: true });
    cpSync(join(moduleDir, 'schema'), schemaDir, { recursive: true, mode: 0 });
    execFileSync('chmod', ['-R', 'u+w', schemaDir]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  log(`built in ${seconds} s`);
  return seconds;
}

/** The folder of initdb and postgres: on PATH, in Debian's versioned folders, or installed now from apt. */
export function ensurePostgres() {
  const find = () => {
    const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
    if (onPath && existsSync(join(dirname(onPath), 'postgres'))) return dirname(onPath);
    const base = '/usr/lib/postgresql';
    const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
    return versions.map((v) => join(base, v, 'bin')).find((d) => existsSync(join(d, 'initdb'))) ?? null;
  };
  const found = find();
  if (found) return found;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).stdout.trim();
  if (process.getuid?.() !== 0 || !apt) {
    throw new Error('PostgreSQL (initdb, postgres) not found: install it (Debian: apt-get install postgresql) or put its bin folder on PATH');
  }
  log('installing Debian\'s postgresql (apt-get), without its default cluster');
  mkdirSync('/etc/postgresql-common', { recursive: true });
  const conf = '/etc/postgresql-common/createcluster.conf';
  if (!existsSync(conf)) writeFileSync(conf, 'create_main_cluster = false\n');
  execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
  const installed = find();
  if (!installed) throw new Error('apt-get installed postgresql but no initdb was found under /usr/lib/postgresql');
  return installed;
}

export function installClusterServer() {
  const version = composeServerVersion();
  const dir = resolve(process.env.TEMPORAL_SERVER_DIR || join(root, '.temporal', 'cluster', `v${version}`));
  const binDir = join(dir, 'bin');
  const server = join(binDir, 'temporal-server');
  const sqlTool = join(binDir, 'temporal-sql-tool');
  const schemaDir = join(dir, 'schema');
  const stamp = join(dir, 'installed.json');
  const have = existsSync(stamp) && existsSync(join(schemaDir, 'postgresql', 'v12')) && versionOf(server)?.includes(version) && versionOf(sqlTool);
  if (have) {
    log(`using ${dir} (temporal-server ${version}, cached)`);
  } else {
    mkdirSync(dir, { recursive: true });
    const seconds = build(version, binDir, schemaDir);
    const got = versionOf(server);
    if (!got?.includes(version)) throw new Error(`${server} --version says ${got ?? 'nothing'}, expected ${version}`);
    writeFileSync(stamp, JSON.stringify({ module: `${MODULE}@v${version}`, go: goVersion(), buildSeconds: seconds, at: new Date().toISOString() }) + '\n');
  }
  return { version, server, sqlTool, schemaDir, pgBin: ensurePostgres() };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(JSON.stringify(installClusterServer()));
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
