// The workspace, tried as an attacker would (issue 33): links out of it
// (`tmp/ext -> /outside`), up from a folder of it (`tmp/up -> ..`), onto a
// secret (`readme.txt -> .env`), a folder swapped for a link between a tool's
// check and its open, and a FIFO. Real files, real links, a real FIFO, a real
// worker process offering the example tools (examples/tools/notes.ts); each
// test checks that nothing outside the workspace changed and that the secret
// is in no result, trace line or history.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainToolContext } from '../../activities/tools/context.js';
import { deleteFile } from '../../activities/tools/delete-file.js';
import { readFile } from '../../activities/tools/read-file.js';
import { NothingChanged, ToolError } from '../../activities/tools/tool-error.js';
import { PROJECT_ROOT } from '../../node/project-root.js';
import type { AgentInput, RunResult } from '../../common/contract.js';
import { transcriptQuery } from '../../common/run-messages.js';
import { decodedHistoryText, mentions } from '../helpers/decoded-history.js';
import { freshWorkspace, marker, useHarness } from '../helpers/harness.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** Every file under `dir` with its content (links as their target): what "nothing changed" compares. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const p = join(at, e.name);
      if (e.isDirectory()) walk(p, `${prefix}${e.name}/`);
      else out[`${prefix}${e.name}`] = e.isFile() ? readFileSync(p, 'utf8') : `<${e.isSymbolicLink() ? 'link' : 'other'}>`;
    }
  };
  walk(dir, '');
  return out;
}

/** A folder outside every workspace, holding a file an attacker wants read, overwritten or deleted. */
function outsideFolder(secret: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'attack-outside-'));
  writeFileSync(join(dir, 'outside.txt'), `outside ${secret}\n`);
  return dir;
}

const rejection = async (p: Promise<unknown>): Promise<Error> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the call was refused').toBeInstanceOf(Error);
  return err as Error;
};

describe('a link swapped in between a tool\'s check and its open (the tools themselves, real files)', () => {
  const secret = `SECRET-${marker()}`;

  it('read_file: a folder on the path turned into a link out of the workspace is refused on the open file, the outside text never read', async () => {
    const outside = outsideFolder(secret);
    writeFileSync(join(outside, 'data.txt'), `stolen ${secret}`);
    const base = mkdtempSync(join(tmpdir(), 'attack-race-'));
    const root = plainToolContext(base).root;
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'data.txt'), 'inside text');
    const ctx = plainToolContext(base, 'k', {
      // After the path was resolved and judged, before the open: the race an attacker with a process of its own wins.
      beforeOpen: () => {
        renameSync(join(root, 'sub'), join(root, 'sub-was'));
        symlinkSync(outside, join(root, 'sub'));
      },
    });
    const err = await rejection(readFile(ctx, { path: 'sub/data.txt' }));
    expect(err).toBeInstanceOf(ToolError);
    expect(err.message).toMatch(/changed while it was being opened/);
    expect(err.message).not.toContain(secret);
  });

  it('read_file: the file itself turned into a link is not followed (O_NOFOLLOW)', async () => {
    const outside = outsideFolder(secret);
    const ctx = plainToolContext(mkdtempSync(join(tmpdir(), 'attack-race-')), 'k', {
      beforeOpen: (path) => {
        renameSync(path, `${path}.was`);
        symlinkSync(join(outside, 'outside.txt'), path);
      },
    });
    const err = await rejection(readFile(ctx, { path: 'notes.txt' }));
    expect(err).toBeInstanceOf(ToolError);
    expect(err.message).toMatch(/symbolic link/);
    expect(err.message).not.toContain(secret);
  });

  it('delete_file: a folder swapped for a link out of the workspace while the approved call waited deletes nothing outside', async () => {
    const outside = outsideFolder(secret);
    writeFileSync(join(outside, 'victim.txt'), 'keep me');
    const before = snapshot(outside);
    const base = mkdtempSync(join(tmpdir(), 'attack-race-'));
    const root = plainToolContext(base).root;
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'victim.txt'), 'inside, approved for deletion');
    const ctx = plainToolContext(base, 'k', {
      // After the check, right before the unlink: where the old code unlinked by the path as checked.
      beforeCommit: async () => {
        renameSync(join(root, 'sub'), join(root, 'sub-was'));
        symlinkSync(outside, join(root, 'sub'));
      },
    });
    const err = await rejection(deleteFile(ctx, { path: 'sub/victim.txt' }));
    // Nothing changed: the claim is released and the model reads why.
    expect(err).toBeInstanceOf(NothingChanged);
    expect((err as NothingChanged).reason).toBeInstanceOf(ToolError);
    expect(snapshot(outside)).toEqual(before);
  });
});

describe('links in a workspace, through a real worker offering the example tools', () => {
  const h = useHarness({ worker: false });
  let worker: WorkerProcess;
  const secret = `SECRET-${marker()}`;
  const TOOLS = ['read_file', 'list_files', 'write_note', 'count_words'];

  beforeAll(async () => {
    worker = await startWorkerProcess({
      taskQueue: h.taskQueue,
      traceDir: h.traceDir,
      workspaceRoot: h.workspaceRoot,
      env: { AGENT_TOOLS_MODULES: join(PROJECT_ROOT, 'examples/tools/notes.ts') },
    });
  });
  afterAll(async () => {
    await worker?.kill();
  });

  /** A workspace laid out as the attacker left it, beside a folder outside it. */
  function booby(): { ws: string; root: string; outside: string } {
    const ws = freshWorkspace();
    const root = join(h.workspaceRoot, ws);
    const outside = outsideFolder(secret);
    mkdirSync(join(root, 'tmp'), { recursive: true });
    writeFileSync(join(root, 'notes.txt'), 'four words of notes\n');
    writeFileSync(join(root, '.env'), `API_KEY=${secret}\n`);
    symlinkSync('.env', join(root, 'readme.txt'));
    symlinkSync(outside, join(root, 'tmp', 'ext'));
    symlinkSync('..', join(root, 'tmp', 'up'));
    return { ws, root, outside };
  }

  const scripted = (ws: string, turns: { name: string; args?: Record<string, unknown> }[][]): AgentInput => ({
    task: `Take notes. script: ${JSON.stringify(turns)}`,
    model: 'script',
    tools: TOOLS,
    workspace: ws,
  });

  /** The run's result, trace and history as text: where a leaked secret would show. */
  async function runAndRead(input: AgentInput): Promise<{ r: RunResult; seen: string; tools: string[]; workflowId: string }> {
    const handle = await h.start(input);
    const r = await handle.result();
    const transcript = await handle.query(transcriptQuery);
    const trace = h.trace(handle.workflowId);
    const history = await decodedHistoryText(await handle.fetchHistory());
    const tools = transcript.filter((m) => m.role === 'tool').map((m) => String(m.content));
    return { r, seen: `${JSON.stringify(r)}\n${JSON.stringify(transcript)}\n${JSON.stringify(trace)}\n${history}`, tools, workflowId: handle.workflowId };
  }

  it('read_file through readme.txt -> .env, tmp/up/.env or tmp/ext/outside.txt: refused, the secret in no result, trace or history', async () => {
    const { ws, outside } = booby();
    const before = snapshot(outside);
    const runs = await Promise.all(
      ['readme.txt', 'tmp/up/.env', 'tmp/up/readme.txt', 'tmp/ext/outside.txt'].map((path) => runAndRead(scripted(ws, [[{ name: 'read_file', args: { path } }]]))),
    );
    for (const { r, seen } of runs) {
      expect(mentions(seen, secret)).toBe(false);
      // Refused with a reason the model and its operator can read: a secret, or a path out of the workspace.
      expect(JSON.stringify(r)).toMatch(/access denied|outside the workspace/);
    }
    expect(snapshot(outside)).toEqual(before);
  });

  it('write_note under tmp/ through tmp/ext (a missing folder under a link out) writes nothing outside', async () => {
    const { ws, outside } = booby();
    const before = snapshot(outside);
    const { seen, tools } = await runAndRead(scripted(ws, [[{ name: 'write_note', args: { path: 'tmp/ext/newdir/pwned.txt', text: 'pwned' } }]]));
    expect(snapshot(outside)).toEqual(before);
    expect(existsSync(join(outside, 'newdir'))).toBe(false);
    expect(tools[0]).toMatch(/leads outside the workspace through a symbolic link/);
    expect(mentions(seen, secret)).toBe(false);
  });

  it('write_note under tmp/ through tmp/up -> .. is judged where it lands: outside tmp/, so it needs the approval it never got, and nothing is written', async () => {
    const { ws, root, outside } = booby();
    const before = snapshot(outside);
    const input = scripted(ws, [
      [{ name: 'write_note', args: { path: 'tmp/up/root-note.txt', text: 'unapproved' } }],
      [{ name: 'write_note', args: { path: 'tmp/up/.env', text: 'API_KEY=mine' } }],
      [{ name: 'write_note', args: { path: 'tmp/fine.txt', text: 'scratch' } }],
    ]);
    const { tools, seen, workflowId } = await runAndRead(input);
    expect(existsSync(join(root, 'root-note.txt'))).toBe(false);
    expect(readFileSync(join(root, '.env'), 'utf8')).toBe(`API_KEY=${secret}\n`);
    // Under tmp/ for real: still written without anyone being asked.
    expect(readFileSync(join(root, 'tmp', 'fine.txt'), 'utf8')).toBe('scratch');
    expect(tools[0]).toMatch(/resolves to "root-note\.txt".*needs a person's approval/);
    expect(tools[1]).toMatch(/resolves to "\.env".*needs a person's approval/);
    expect(h.events(workflowId).filter((l) => l.type === 'approval_required')).toEqual([]);
    expect(snapshot(outside)).toEqual(before);
    expect(mentions(seen, secret)).toBe(false);
  });

  it('list_files does not list through a link: links are skipped, never followed', async () => {
    const { ws } = booby();
    symlinkSync(join(outsideFolder(secret), 'outside.txt'), join(h.workspaceRoot, ws, 'looks-local.txt'));
    const { r, seen } = await runAndRead(scripted(ws, [[{ name: 'list_files' }]]));
    expect(r.output).toContain('notes.txt');
    expect(r.output).not.toMatch(/readme\.txt|looks-local|outside/);
    expect(mentions(seen, secret)).toBe(false);
  });

  // Last: on the code before the fix, this blocked the worker's thread for good.
  it('count_words and read_file on a FIFO are refused at once; the worker stays free', async () => {
    const { ws, root } = booby();
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const { r, tools } = await runAndRead(
      scripted(ws, [
        [{ name: 'count_words', args: { path: 'pipe' } }],
        [{ name: 'read_file', args: { path: 'pipe' } }],
        [{ name: 'count_words', args: { path: 'notes.txt' } }],
      ]),
    );
    expect(r.status).toBe('completed');
    expect(tools[0]).toMatch(/pipe is a FIFO \(named pipe\), not a regular file/);
    expect(tools[1]).toMatch(/not a regular file/);
    expect(tools[2]).toBe('notes.txt: 4 words');
    expect(statSync(join(root, 'pipe')).isFIFO()).toBe(true);
  });
});
