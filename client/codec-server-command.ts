// `agent-harness codec-server`: the codec server (./codec-server.ts) as a
// command of the package's bin, so a team that installed the package (no
// `npm run` scripts, no sources) can give the `temporal` CLI and the Web UI
// `--codec-endpoint`. Flags win over the variables `npm run codec-server`
// reads (CODEC_PORT, CODEC_HOST, CODEC_ALLOW_ORIGIN, CODEC_MAX_BODY_BYTES,
// AGENT_PAYLOAD_KEYS); the token is read from AGENT_CODEC_TOKEN only, never
// a flag, which every local user could read in the process list.
import { closeSync, fstatSync, openSync, readSync, constants as fs } from 'node:fs';
import { parseFlags as parseArgs } from './parse-flags.js';
import { codecServerOptionsFromEnv, startCodecServer, type CodecServerOptions } from './codec-server.js';
import { PayloadKeysError, parsePayloadKeys, payloadKeysFromEnv, type PayloadKey } from '../node/payload-keys.js';
import { UsageError } from './usage-error.js';

/** A keys file holds `kid:base64key` entries: 64 KiB is some thousand keys, and a cap keeps a wrong path (a log, a device) from being read whole. */
export const MAX_KEYS_FILE_BYTES = 64 * 1024;

/** The server, started, and how to stop it; the caller prints `url`. */
export interface CodecServerCommand {
  url: string;
  tokenRequired: boolean;
  close(): Promise<void>;
}

/**
 * The command's flags and environment made into a started server. Throws
 * UsageError naming the flag, the variable or the keys file (by path and
 * entry, never a key's bytes) when one is wrong.
 */
export async function startCodecServerCommand(args: readonly string[], uiPort: number, env: NodeJS.ProcessEnv = process.env): Promise<CodecServerCommand> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'allow-origin': { type: 'string' },
      'keys-file': { type: 'string' },
      'max-body-bytes': { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const port = wholeNumber(values.port ?? env.CODEC_PORT ?? '8888', values.port !== undefined ? '--port' : 'CODEC_PORT', 0, 65_535);
  let opts: CodecServerOptions;
  try {
    opts = codecServerOptionsFromEnv(uiPort, env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values['allow-origin'] !== undefined) opts.allowOrigins = values['allow-origin'];
  if (values['max-body-bytes'] !== undefined) opts.maxBodyBytes = wholeNumber(values['max-body-bytes'], '--max-body-bytes', 1, Number.MAX_SAFE_INTEGER);
  opts.payloadKeys = values['keys-file'] !== undefined ? readKeysFile(values['keys-file']) : envKeys(env);
  const host = values.host ?? env.CODEC_HOST ?? '127.0.0.1';
  const { url, server } = await startCodecServer(port, host, opts).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(err.code === 'EADDRINUSE' ? `port ${port} on ${host} is in use (--port)` : `cannot listen on ${host}:${port}: ${err.message}`);
  });
  return {
    url,
    tokenRequired: Boolean(opts.token),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The command itself: starts, prints where, serves until SIGINT or SIGTERM. */
export async function codecServerCommand(args: readonly string[], uiPort: number, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const started = await startCodecServerCommand(args, uiPort, env);
  console.log(`codec server on ${started.url}${started.tokenRequired ? ' (bearer token required)' : ''}: temporal ... --codec-endpoint ${started.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await started.close();
  return 0;
}

function envKeys(env: NodeJS.ProcessEnv): PayloadKey[] | null {
  try {
    return payloadKeysFromEnv(env);
  } catch (err) {
    if (err instanceof PayloadKeysError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * The keys of a file in AGENT_PAYLOAD_KEYS's form (`kid:base64key`, comma- or
 * newline-separated). Opened once, without following a link at the last
 * step and without blocking (a FIFO), and judged on the open descriptor: a
 * regular file, at most MAX_KEYS_FILE_BYTES. A mistake names the file and the
 * entry, never the key.
 */
export function readKeysFile(path: string): PayloadKey[] {
  const where = `--keys-file ${path}`;
  let fd: number;
  try {
    fd = openSync(path, fs.O_RDONLY | fs.O_NOFOLLOW | fs.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`${where}: ${code === 'ENOENT' ? 'no such file' : code === 'ELOOP' ? 'is a symbolic link (give the file it points to)' : code === 'EACCES' ? 'not readable by this user' : `cannot be opened (${code ?? 'error'})`}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`${where}: not a regular file`);
    if (st.size > MAX_KEYS_FILE_BYTES) throw new UsageError(`${where}: ${st.size} bytes, over the ${MAX_KEYS_FILE_BYTES}-byte cap of a keys file`);
    // Read at most one byte past the cap: a file that grew since fstat is refused too.
    const buf = Buffer.alloc(MAX_KEYS_FILE_BYTES + 1);
    let n = 0;
    for (let r = -1; r !== 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_KEYS_FILE_BYTES) throw new UsageError(`${where}: over the ${MAX_KEYS_FILE_BYTES}-byte cap of a keys file`);
    if ((st.mode & 0o077) !== 0) console.error(`agent-harness codec-server: ${where} can be read by other users (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`);
    const spec = buf
      .subarray(0, n)
      .toString('utf8')
      .split(/[\n,]/)
      .map((e) => e.trim())
      .filter((e) => e !== '' && !e.startsWith('#'))
      .join(',');
    if (spec === '') throw new UsageError(`${where}: holds no key (expected kid:base64key entries)`);
    try {
      return parsePayloadKeys(spec, where);
    } catch (err) {
      if (err instanceof PayloadKeysError) throw new UsageError(err.message);
      throw err;
    }
  } finally {
    closeSync(fd);
  }
}

function wholeNumber(text: string, name: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}
