// The payload encryption keys (AGENT_PAYLOAD_KEYS): `kid:base64key` entries,
// comma-separated, each key 32 bytes (AES-256). The first entry encrypts; every
// entry decrypts, so a key is rotated by putting the new one first and keeping
// the old one listed until no payload under it is read any more. A mistake in
// the setting stops the process at start, naming the entry (by position and
// key id, never by the key's bytes), so no side runs with a keyring the others
// do not share.

/** One key: its id (written in each payload's metadata) and its 32 bytes. */
export interface PayloadKey {
  /** The key id, written into each payload's metadata so a reader picks the key that decrypts it. */
  id: string;
  /** The AES-256 key: 32 bytes. */
  key: Uint8Array;
}

export const PAYLOAD_KEYS_ENV = 'AGENT_PAYLOAD_KEYS';
export const KEY_BYTES = 32;
/** Key ids travel in payload metadata and in error messages: short, printable, no separator of the setting's own. */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A payload key setting that cannot be used (bad id, not 32 bytes, a repeated id): the message names the entry, never the key's bytes. */
export class PayloadKeysError extends Error {
  /** Always `PayloadKeysError`. */
  override readonly name = 'PayloadKeysError';
}

/** Parses the setting's text; throws PayloadKeysError naming the first bad entry. */
export function parsePayloadKeys(spec: string, source = PAYLOAD_KEYS_ENV): PayloadKey[] {
  const entries = spec.split(',').map((e) => e.trim());
  const keys: PayloadKey[] = [];
  entries.forEach((entry, i) => {
    const at = `${source} entry ${i + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new PayloadKeysError(`${at}: expected kid:base64key, got no ":"`);
    const id = entry.slice(0, colon);
    const b64 = entry.slice(colon + 1);
    if (!KEY_ID.test(id)) throw new PayloadKeysError(`${at}: key id ${JSON.stringify(id)} must be 1-64 of A-Z a-z 0-9 . _ -`);
    // Buffer.from(…, 'base64') skips what is not base64 instead of refusing it: check the text first.
    if (!BASE64.test(b64) || b64.length % 4 !== 0) throw new PayloadKeysError(`${at} (key id ${id}): the key is not valid base64`);
    const key = new Uint8Array(Buffer.from(b64, 'base64'));
    if (key.length !== KEY_BYTES) throw new PayloadKeysError(`${at} (key id ${id}): the key is ${key.length} bytes, AES-256 needs ${KEY_BYTES}`);
    keys.push({ id, key });
  });
  checkPayloadKeys(keys, source);
  return keys;
}

/** The same checks for keys given as values (a plugin's options): sizes and unique ids. */
export function checkPayloadKeys(keys: readonly PayloadKey[], source = 'payload keys'): void {
  const seen = new Set<string>();
  keys.forEach(({ id, key }, i) => {
    const at = `${source} entry ${i + 1}`;
    if (!KEY_ID.test(id)) throw new PayloadKeysError(`${at}: key id ${JSON.stringify(id)} must be 1-64 of A-Z a-z 0-9 . _ -`);
    if (key.length !== KEY_BYTES) throw new PayloadKeysError(`${at} (key id ${id}): the key is ${key.length} bytes, AES-256 needs ${KEY_BYTES}`);
    if (seen.has(id)) throw new PayloadKeysError(`${at}: key id ${id} is listed twice (each id must name one key)`);
    seen.add(id);
  });
}

/** AGENT_PAYLOAD_KEYS from the environment: null when unset or empty (payloads are not encrypted). */
export function payloadKeysFromEnv(env: NodeJS.ProcessEnv = process.env): PayloadKey[] | null {
  const spec = env[PAYLOAD_KEYS_ENV]?.trim();
  return spec ? parsePayloadKeys(spec) : null;
}
