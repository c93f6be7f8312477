#!/usr/bin/env node
// The public API report: for each entry of package.json `exports`, API
// Extractor's summary of every declaration a consumer sees through it (the
// types it exports and the internal ones they reference), checked in as
// api/<entry>.api.md. A change to a public type then shows in review as a
// change to that file, and is a deliberate act.
//   node scripts/api-report.mjs          (npm run api:update) rewrites the reports
//   node scripts/api-report.mjs --check  fails, saying so, when they differ (test/unit/api-report.test.ts)
// Both modes also hold the surface to two rules (issue 35, item 7), and
// --check fails when one is broken: every declaration a report shows carries
// a doc comment (no "(undocumented)"), and every type a public signature
// names is itself exported from the entry (no "ae-forgotten-export": a type
// a consumer must write but cannot import). Each is listed with its place.
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** `./workflow` → { name: 'workflow', types: 'workflows/index.d.ts' } (relative to dist/). */
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.types)
  .map(([key, target]) => ({ name: key.replace(/^\.\//, ''), types: target.types.replace(/^\.\/dist\//, '') }));

// Declarations of their own, not dist/: the report never reads a stale build,
// and runs beside `npm run build` without racing it. Inside the project (and
// ignored by git), so the paths the report names are the same on every machine.
const work = join(root, '.data', 'api-report');
rmSync(work, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--outDir', join(work, 'dts')], { stdio: 'inherit' });
} catch {
  console.error('api-report: the declarations do not compile (tsc errors above)');
  process.exit(1);
}

if (!check) mkdirSync(join(root, 'api'), { recursive: true });
const configs = entries.map((entry) => ({ entry, config: configOf(entry) }));
// One TypeScript program for every entry: the declarations are the same
// files, and building it is most of the time the report takes.
const compilerState = CompilerState.create(configs[0].config);
let failed = 0;
const changed = [];
/** Broken rules, one line each: `entry: where: what`. */
const gaps = [];
for (const { entry, config } of configs) {
  const result = Extractor.invoke(config, {
    localBuild: !check,
    compilerState,
    messageCallback(message) {
      // Its own lines about the report files (written, changed, copied): the
      // outcome is said once below. Anything that failed still prints.
      if (message.messageId.startsWith('console-api-report') && message.logLevel !== ExtractorLogLevel.Error) message.handled = true;
      if (message.messageId === 'console-preamble') message.handled = true;
      // Reported as "(undocumented)" in the report; here for its place in the declarations.
      if (message.messageId === 'ae-undocumented') gaps.push(`${entry.name}: ${placeOf(message)}: ${message.text}`);
    },
  });
  if (result.errorCount > 0) failed++;
  // A forgotten export goes into the report (addToApiReportFile), not to the
  // callback: read it back from the report this run wrote.
  const report = readFileSync(join(work, 'report', `${entry.name}.api.md`), 'utf8');
  for (const line of report.split('\n')) {
    const forgotten = /\(ae-forgotten-export\) (The symbol "[^"]+")/.exec(line);
    if (forgotten) gaps.push(`${entry.name}: ${forgotten[1]} is named by a public signature but not exported by the entry`);
  }
  if (result.apiReportChanged) changed.push(entry.name);
}

if (failed > 0) {
  console.error(`api-report: ${failed} entr${failed === 1 ? 'y' : 'ies'} failed (errors above)`);
  process.exit(1);
}
if (gaps.length > 0) {
  const unique = [...new Set(gaps)];
  console.error(`api-report: ${unique.length} undocumented or forgotten export${unique.length === 1 ? '' : 's'}:\n  ${unique.join('\n  ')}`);
  if (check) process.exit(1);
}
if (check && changed.length > 0) {
  const reports = changed.map((n) => `api/${n}.api.md (now: .data/api-report/report/${n}.api.md)`);
  console.error(`public API changed: ${reports.join(', ')}: review and run npm run api:update`);
  process.exit(1);
}
console.log(check ? `api-report: ${entries.length} entries match api/` : `api-report: ${changed.length ? `updated ${changed.map((n) => `api/${n}.api.md`).join(', ')}` : 'no change'}`);

/** `common/contract.d.ts:12` for a message about a declaration (the emitted .d.ts mirrors its .ts source). */
function placeOf(message) {
  if (!message.sourceFilePath) return '?';
  const file = message.sourceFilePath.startsWith(join(work, 'dts')) ? message.sourceFilePath.slice(join(work, 'dts').length + 1) : message.sourceFilePath;
  return `${file}:${message.sourceFileLine ?? '?'}`;
}

/** API Extractor's configuration for one entry: its report only (no doc model, no rollup). */
function configOf(entry) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(work, 'dts', entry.types),
      // Only the emitted declarations: with the sources in the program too,
      // API Extractor 7.60 cannot follow Node's global types (AbortSignal).
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'], strict: true, skipLibCheck: true },
          include: [join(work, 'dts', '**', '*.d.ts')],
        },
      },
      apiReport: {
        enabled: true,
        reportFolder: join(root, 'api'),
        reportTempFolder: join(work, 'report'),
        reportFileName: `${entry.name}.api.md`,
        includeForgottenExports: true,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
          // The package has no release stages: everything exported is public.
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // Said in the report instead ("undocumented", "forgotten export"), where review sees it.
          'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        },
        // The comments are prose for readers of the source, not TSDoc markup.
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
    configObjectFullPath: join(root, 'api', 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
}
