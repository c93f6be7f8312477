// The MCP test server (./fs-server.ts) as its own process: a folder it
// serves with a file in it, and its start over streamable HTTP on a port it
// picks or is given (the same port again is how a test restarts it).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export const SERVER = join(PROJECT_ROOT, 'test/mcp/fs-server.ts');

export interface Served {
  root: string;
  record: string;
}

export interface HttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A fresh folder holding hello.txt, and the path of the server's own record of calls. */
export function servedFolder(label: string): Served {
  const dir = mkdtempSync(join(tmpdir(), `mcp-${label}-`));
  const root = join(dir, 'files');
  mkdirSync(root);
  writeFileSync(join(root, 'hello.txt'), 'hello from the MCP server\n');
  return { root, record: join(dir, 'record.jsonl') };
}

export const serverArgs = (s: Served) => ['--import', 'tsx', SERVER, '--root', s.root, '--record', s.record];

/** The server over streamable HTTP: resolves once it listens. */
export async function startHttpServer(s: Served, port = 0): Promise<HttpServer> {
  const child = spawn(process.execPath, [...serverArgs(s), '--http', String(port)], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (b: Buffer) => {
      output += b.toString();
      const m = /listening (\S+)/.exec(output);
      if (m) resolve(m[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the MCP test server exited (${code}) before listening:\n${output}`)));
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
