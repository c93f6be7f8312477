// The scripted provider in a process of its own, as a bench starts it: a real
// provider is a remote service, so its work (parsing a request, counting the
// prompt's tokens, pacing and writing the reply) must not run on the event
// loop of the worker under measurement. In the bench's own process it did:
// our worker, the bench's client and the provider shared one event loop, while
// the peer's worker ran in a process of its own (./peer-process.ts), so every
// reply's tokenizing delayed our activities and workflow tasks and never the
// peer's. Both sides now reach the provider the same way: HTTP to another process.
import { spawn, type ChildProcess } from 'node:child_process';
import { PROJECT_ROOT } from '../node/project-root.js';
import type { ProviderOptions } from '../dev/provider/server.js';

/** The options a provider process takes: its environment settings (dev/provider/main.ts). */
export type ProviderProcessOptions = Pick<ProviderOptions, 'apiKey' | 'firstTokenMs' | 'msPerToken' | 'streamChunkDelayMs'>;

export interface ProviderProcess {
  url: string;
  pid: number;
  close(): Promise<void>;
}

const env = (name: string, v: number | string | undefined): Record<string, string> => (v === undefined ? {} : { [name]: String(v) });

/** `npm run provider` on a free port; resolves once it listens, with its URL. */
export async function startProviderProcess(opts: ProviderProcessOptions = {}): Promise<ProviderProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', `${PROJECT_ROOT}/dev/provider/main.ts`], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: '0',
      ...env('PROVIDER_API_KEY', opts.apiKey),
      ...env('PROVIDER_FIRST_TOKEN_MS', opts.firstTokenMs),
      ...env('PROVIDER_MS_PER_TOKEN', opts.msPerToken),
      ...env('PROVIDER_STREAM_CHUNK_MS', opts.streamChunkDelayMs),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (b: Buffer) => {
      seen += b.toString();
      const m = /listening on (\S+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the scripted provider process exited with ${code} before listening: ${seen.slice(0, 500)}`)));
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('the scripted provider process has no pid');
  return {
    url,
    pid,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
