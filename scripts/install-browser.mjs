#!/usr/bin/env node
// `npm run browser:install`: provisions the headless browser that
// test/web-ui-browser.test.ts drives (through puppeteer-core) against the Web
// UI. No browser download reaches the machines this project runs on (no CDN,
// so neither Puppeteer's nor Playwright's own browsers), so it is Debian's
// `chromium` package from the apt repositories: `--no-install-recommends`,
// ~125 MB download, ~350 MB installed, ~20 s here.
//   - CHROMIUM_PATH, or a Chromium/Chrome already installed: nothing to do;
//   - root with apt-get: installs it;
//   - otherwise: says what to run, and exits 1.
// Prints the binary and its version. Keep the candidates in step with test/helpers/browser.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];
const log = (msg) => console.error(`[browser] ${msg}`);

function find() {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

function version(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${bin} --version failed: ${(r.stderr || r.error || '').toString().trim()}`);
  return r.stdout.trim();
}

let bin = find();
if (!bin && process.env.CHROMIUM_PATH) {
  log(`CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist`);
  process.exit(1);
}
if (!bin) {
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!root || !apt) {
    log('no Chromium found. Install one: `sudo apt-get install --no-install-recommends chromium` (Debian/Ubuntu),');
    log('or any Chromium/Chrome, and set CHROMIUM_PATH to its binary if it is not in ' + CANDIDATES.join(', '));
    process.exit(1);
  }
  const started = Date.now();
  log('installing Debian\'s chromium (apt-get, --no-install-recommends, ~125 MB download)…');
  // NEEDRESTART_SUSPEND: no service-restart prompt (and its noise) after the install.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', NEEDRESTART_SUSPEND: '1' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  log(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
  bin = find();
  if (!bin) {
    log(`apt-get installed chromium but none of ${CANDIDATES.join(', ')} exists`);
    process.exit(1);
  }
}
console.log(`${bin}: ${version(bin)}`);
