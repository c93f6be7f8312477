// `npm run bench:package`: what the package costs a team. The tarball `npm
// pack` makes (size, files), how long installing it into a fresh project
// takes (npm's cache warm from this repository's install: --prefer-offline),
// and the workflow bundle the SDK builds from a consumer's workflows module
// that re-exports agentRun, beside the bundle `npm run worker` builds from
// workflows/index.ts today. Prints the figures; asserts nothing.
//   PACKAGE_INSTALLS (default 3): fresh installs timed
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKFLOWS_PATH } from '../worker/create-worker.js';
import { buildAndPack, cleanEnv, diskBytes, installConsumer, installedCopies, run } from '../test/helpers/package-consumer.js';

const INSTALLS = Number(process.env.PACKAGE_INSTALLS ?? 3);
const KiB = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const quiet = () => {};
const logger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: console.warn, error: console.error };

const dir = mkdtempSync(join(tmpdir(), 'agent-harness-bench-package-'));
try {
  let t = performance.now();
  const packed = buildAndPack(join(dir, 'pack'));
  const packMs = performance.now() - t;
  const declarations = packed.files.filter((f) => f.endsWith('.d.ts')).length;
  console.log(`tarball: ${KiB(packed.size)} (${KiB(packed.unpackedSize)} unpacked), ${packed.files.length} files (${declarations} .d.ts); build + pack ${s(packMs)}`);

  const installs: number[] = [];
  let consumerDir = '';
  for (let i = 0; i < INSTALLS; i++) {
    const consumer = installConsumer(join(dir, `consumer-${i}`), packed.tarball);
    installs.push(consumer.installMs);
    // Keep the first for the bundle; the others only for their time.
    if (i === 0) consumerDir = consumer.dir;
    else rmSync(consumer.dir, { recursive: true, force: true });
  }
  const sorted = [...installs].sort((a, b) => a - b);
  console.log(`consumer node_modules: ${(diskBytes(join(consumerDir, 'node_modules')) / 1024 / 1024).toFixed(0)} MiB; copies of @temporalio/workflow installed: ${installedCopies(consumerDir, '@temporalio/workflow').join(', ')}`);
  console.log(`install into a fresh project: median ${s(sorted[Math.floor(sorted.length / 2)])} (each: ${installs.map(s).join(', ')})`);

  t = performance.now();
  const bundled = run(process.execPath, ['bundle.mjs'], consumerDir, cleanEnv());
  const packageBundleMs = performance.now() - t;
  if (bundled.status !== 0) throw new Error(`bundling the consumer's workflows failed:\n${bundled.stderr}`);
  const fromPackage = JSON.parse(bundled.stdout.trim().split('\n').pop() ?? '{}') as { bytes: number; workflowCopies: string[] };
  console.log(`copies of @temporalio/workflow in the consumer's workflow bundle: ${fromPackage.workflowCopies.length} (${fromPackage.workflowCopies.join(', ')})`);

  t = performance.now();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger });
  const sourceBundleMs = performance.now() - t;
  console.log(`workflow bundle from the package (consumer's workflows module, plain node): ${KiB(fromPackage.bytes)}, ${s(packageBundleMs)} with node's start`);
  console.log(`workflow bundle of workflows/index.ts (what npm run worker builds):          ${KiB(code.length)}, ${s(sourceBundleMs)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
