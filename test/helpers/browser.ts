// A real headless Chromium for the tests that look at the Web UI. No browser
// is downloaded (no CDN reaches the machines this runs on): puppeteer-core
// drives the system's Chromium — Debian's `chromium` package, provisioned by
// `npm run browser:install` (scripts/install-browser.mjs) and by .ci/run.
import { existsSync, readFileSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Where a system Chromium is looked for, after CHROMIUM_PATH. Keep in step with scripts/install-browser.mjs. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];

export const CHROMIUM_MISSING = [
  'no headless browser for the Web UI test: install one with `npm run browser:install`',
  '(as root: apt-get install --no-install-recommends chromium, ~125 MB download),',
  'or set CHROMIUM_PATH to a Chromium or Chrome binary.',
].join(' ');

/** The Chromium binary to drive; throws how to install one when there is none. */
export function findChromium(): string {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv} does not exist. ${CHROMIUM_MISSING}`);
    return fromEnv;
  }
  const found = CHROMIUM_CANDIDATES.find((p) => existsSync(p));
  if (!found) throw new Error(`${CHROMIUM_MISSING} Looked for: ${CHROMIUM_CANDIDATES.join(', ')}.`);
  return found;
}

export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: findChromium(),
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
    // --disable-dev-shm-usage: containers often have a tiny /dev/shm.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    protocolTimeout: 180_000,
    // A cold first start (fonts, profile, shared libraries read from disk) took
    // 8 s here unloaded and passed puppeteer's 30 s default in CI, where the
    // suite's other files load both cores; warm starts take under half a second.
    timeout: 180_000,
  });
}

/** Width and height from a PNG's IHDR chunk; throws if the file is not a PNG. */
export function pngSize(path: string): { width: number; height: number; bytes: number } {
  const b = readFileSync(path);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (b.length < 24 || !b.subarray(0, 8).equals(signature) || b.toString('latin1', 12, 16) !== 'IHDR') throw new Error(`${path} is not a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), bytes: b.length };
}
