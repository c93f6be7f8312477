// `agent-harness codec-server` is a new way in: its flags, its keys file and
// the server it starts. A bad keys file (missing, a link, a FIFO, huge, a
// short key, empty) stops it at start with one line naming the file and the
// entry, never a key's bytes, and without hanging; an oversized body or no
// token is refused by the server it starts.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_KEYS_FILE_BYTES, readKeysFile, startCodecServerCommand, type CodecServerCommand } from '../../client/codec-server-command.js';
import { UsageError } from '../../client/usage-error.js';

const exec = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'agent-harness.mjs');
const dir = mkdtempSync(join(tmpdir(), 'codec-cmd-'));
const file = (name: string, text: string | Buffer, mode = 0o600) => {
  const p = join(dir, name);
  writeFileSync(p, text, { mode });
  return p;
};
const goodKey = randomBytes(32).toString('base64');
const noEnv: NodeJS.ProcessEnv = {};

const refusal = (f: () => unknown): Error => {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
};

let started: CodecServerCommand | null = null;
afterEach(async () => {
  await started?.close();
  started = null;
});

describe('agent-harness codec-server: the keys file', () => {
  it('a missing file, a link and a directory are refused naming the file', () => {
    const missing = join(dir, 'nope');
    expect(refusal(() => readKeysFile(missing))).toMatchObject({ message: `--keys-file ${missing}: no such file` });
    const target = file('real-keys', `k1:${goodKey}\n`);
    const link = join(dir, 'link-keys');
    symlinkSync(target, link);
    expect(refusal(() => readKeysFile(link)).message).toBe(`--keys-file ${link}: is a symbolic link (give the file it points to)`);
    expect(refusal(() => readKeysFile(dir)).message).toBe(`--keys-file ${dir}: not a regular file`);
  });

  it('a FIFO is refused at once rather than read until someone writes to it', async () => {
    const fifo = join(dir, 'fifo-keys');
    await exec('mkfifo', [fifo]);
    expect(refusal(() => readKeysFile(fifo)).message).toBe(`--keys-file ${fifo}: not a regular file`);
  });

  it('a file over the cap is refused naming the cap, not read whole', () => {
    const big = file('big-keys', Buffer.alloc(MAX_KEYS_FILE_BYTES + 1, 'a'));
    expect(refusal(() => readKeysFile(big)).message).toBe(`--keys-file ${big}: ${MAX_KEYS_FILE_BYTES + 1} bytes, over the ${MAX_KEYS_FILE_BYTES}-byte cap of a keys file`);
  });

  it('a short key, a duplicated id, bad base64 and an empty file name the entry and never the key', () => {
    const shortKey = randomBytes(16).toString('base64');
    const short = file('short-keys', `# rotated 2026-03\nnew:${goodKey}\nold:${shortKey}\n`);
    const err = refusal(() => readKeysFile(short));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe(`--keys-file ${short} entry 2 (key id old): the key is 16 bytes, AES-256 needs 32`);
    expect(err.message).not.toContain(shortKey);
    const twice = file('twice-keys', `a:${goodKey},a:${goodKey}`);
    expect(refusal(() => readKeysFile(twice)).message).toBe(`--keys-file ${twice} entry 2: key id a is listed twice (each id must name one key)`);
    const garbled = file('garbled-keys', `a:${goodKey.slice(0, 20)}!!${goodKey.slice(22)}`);
    expect(refusal(() => readKeysFile(garbled)).message).toBe(`--keys-file ${garbled} entry 1 (key id a): the key is not valid base64`);
    const empty = file('empty-keys', '# nothing yet\n\n');
    expect(refusal(() => readKeysFile(empty)).message).toBe(`--keys-file ${empty}: holds no key (expected kid:base64key entries)`);
  });

  it('the bin stops at start with one line naming the file, exit 2, no stack trace', async () => {
    const short = file('bin-short-keys', `k1:${randomBytes(8).toString('base64')}`);
    const out = await exec(process.execPath, [BIN, 'codec-server', '--port', '0', '--keys-file', short], { timeout: 60_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(out?.code).toBe(2);
    expect(out?.stderr.trim()).toBe(`agent-harness codec-server: --keys-file ${short} entry 1 (key id k1): the key is 8 bytes, AES-256 needs 32 (see agent-harness codec-server --help)`);
  });
});

describe('agent-harness codec-server: flags and the server it starts', () => {
  it('bad flags and settings are refused naming them', async () => {
    await expect(startCodecServerCommand(['--port', '70000'], 8233, noEnv)).rejects.toThrow('--port must be a whole number from 0 to 65535, got "70000"');
    await expect(startCodecServerCommand([], 8233, { CODEC_PORT: 'x' })).rejects.toThrow('CODEC_PORT must be a whole number from 0 to 65535, got "x"');
    await expect(startCodecServerCommand(['--port', '0', '--max-body-bytes', '0'], 8233, noEnv)).rejects.toThrow('--max-body-bytes must be a whole number from 1 to');
    await expect(startCodecServerCommand(['--port', '0', 'extra'], 8233, noEnv)).rejects.toThrow('unexpected argument "extra"');
    await expect(startCodecServerCommand(['--port', '0'], 8233, { AGENT_PAYLOAD_KEYS: 'k1:AAAA' })).rejects.toThrow('AGENT_PAYLOAD_KEYS entry 1 (key id k1): the key is 3 bytes, AES-256 needs 32');
  });

  it('a port in use is one line naming it', async () => {
    started = await startCodecServerCommand(['--port', '0'], 8233, noEnv);
    const port = new URL(started.url).port;
    await expect(startCodecServerCommand(['--port', port], 8233, noEnv)).rejects.toThrow(`port ${port} on 127.0.0.1 is in use (--port)`);
  });

  it('an oversized body gets 413 under --max-body-bytes, a missing token 401, and the server keeps answering', async () => {
    started = await startCodecServerCommand(['--port', '0', '--max-body-bytes', '1024', '--keys-file', file('srv-keys', `k1:${goodKey}`)], 8233, { AGENT_CODEC_TOKEN: 'tok-123' });
    expect(started.tokenRequired).toBe(true);
    const post = (body: string, token?: string) =>
      fetch(`${started!.url}/decode`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const noToken = await post('{"payloads":[]}');
    expect(noToken.status).toBe(401);
    const big = await post(JSON.stringify({ payloads: [{ metadata: {}, data: 'A'.repeat(4096) }] }), 'tok-123');
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toBe('request body of 4136 bytes is over the 1024-byte cap');
    const ok = await post('{"payloads":[]}', 'tok-123');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ payloads: [] });
  });
});
