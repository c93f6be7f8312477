// The encryption codec on its own: AGENT_PAYLOAD_KEYS refused at start when
// wrong (naming the entry, never the key), rotation (first encrypts, all
// decrypt), and a payload that cannot be decrypted refused naming its key id,
// never decoded as garbage.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Payload } from '@temporalio/common';
import { dataConverter, EncryptionPayloadCodec, ENCRYPTED_ENCODING, GZIP_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../../node/payload-codec.js';
import { parsePayloadKeys, payloadKeysFromEnv, type PayloadKey } from '../../node/payload-keys.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const b64 = (n = 32) => randomBytes(n).toString('base64');
const key = (id: string): PayloadKey => ({ id, key: new Uint8Array(randomBytes(32)) });
const json = (text: string): Payload => ({ metadata: { encoding: enc.encode('json/plain') }, data: enc.encode(JSON.stringify({ text })) });
const meta = (p: Payload, k: string) => dec.decode(p.metadata?.[k] ?? new Uint8Array());

/** Through every codec of a converter, as the SDK runs them: encode in order, decode in reverse. */
async function roundTrip(encodeWith: PayloadKey[] | null, decodeWith: PayloadKey[] | null, p: Payload): Promise<{ stored: Payload; back: Payload }> {
  const e = dataConverter({ payloadKeys: encodeWith }).payloadCodecs ?? [];
  const d = dataConverter({ payloadKeys: decodeWith }).payloadCodecs ?? [];
  let stored = [p];
  for (const c of e) stored = await c.encode(stored);
  let back = stored;
  for (const c of [...d].reverse()) back = await c.decode(back);
  return { stored: stored[0], back: back[0] };
}

describe('AGENT_PAYLOAD_KEYS', () => {
  it('parses kid:base64key entries; the first is the one that encrypts', () => {
    const keys = parsePayloadKeys(`k2:${b64()}, k1:${b64()}`);
    expect(keys.map((k) => [k.id, k.key.length])).toEqual([['k2', 32], ['k1', 32]]);
    expect(payloadKeysFromEnv({})).toBeNull();
    expect(payloadKeysFromEnv({ AGENT_PAYLOAD_KEYS: '  ' })).toBeNull();
  });

  it('refuses a bad entry in one line naming it by position and key id, never printing the key', () => {
    const short = b64(16);
    const cases: [string, string][] = [
      [`k1:${b64()},k2:${short}`, 'AGENT_PAYLOAD_KEYS entry 2 (key id k2): the key is 16 bytes, AES-256 needs 32'],
      [`k1:${b64()},k1:${b64()}`, 'AGENT_PAYLOAD_KEYS entry 2: key id k1 is listed twice (each id must name one key)'],
      ['k1:not*base64!', 'AGENT_PAYLOAD_KEYS entry 1 (key id k1): the key is not valid base64'],
      [`${b64()}`, 'AGENT_PAYLOAD_KEYS entry 1: expected kid:base64key, got no ":"'],
      [`:${b64()}`, 'AGENT_PAYLOAD_KEYS entry 1: key id "" must be 1-64 of A-Z a-z 0-9 . _ -'],
    ];
    for (const [spec, message] of cases) {
      expect(() => parsePayloadKeys(spec)).toThrow(message);
      try {
        parsePayloadKeys(spec);
      } catch (err) {
        expect(String(err)).not.toContain(short);
        expect(String(err).split('\n')).toHaveLength(1);
      }
    }
    // Through the one function every side calls: a worker, a client, the codec server all stop at start.
    expect(() => dataConverter({ payloadKeys: [{ id: 'k1', key: new Uint8Array(31) }] })).toThrow('entry 1 (key id k1): the key is 31 bytes');
  });
});

describe('the encryption codec', () => {
  it('compresses, then encrypts every payload under the first key; the ciphertext holds no plaintext', async () => {
    const k = key('k1');
    const big = json('secret '.repeat(10_000));
    const { stored, back } = await roundTrip([k], [k], big);
    expect(meta(stored, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(meta(stored, KEY_ID_METADATA)).toBe('k1');
    expect(Buffer.from(stored.data!).includes('secret')).toBe(false);
    // Compressed before encryption: 70 KB of repeated text seals to well under a KB.
    expect(stored.data!.length).toBeLessThan(1000);
    expect(dec.decode(back.data)).toBe(dec.decode(big.data));
    // And a small one, which gzip leaves alone, is encrypted all the same.
    const small = await roundTrip([k], [k], json('tiny secret'));
    expect(meta(small.stored, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(dec.decode(small.back.data)).toContain('tiny secret');
  });

  it('rotates: payloads of the old key still decode while it is listed second; new ones use the new key', async () => {
    const old = key('2025-01');
    const next = key('2026-01');
    const { stored } = await roundTrip([old], [old], json('written before the rotation'));
    const codec = new EncryptionPayloadCodec([next, old]);
    const [back] = await codec.decode([stored]);
    expect(dec.decode(back.data)).toContain('written before the rotation');
    const [fresh] = await codec.encode([json('after')]);
    expect(meta(fresh, KEY_ID_METADATA)).toBe('2026-01');
    // Plain payloads from before keys were set stay readable.
    const plain = json('from before encryption');
    expect((await codec.decode([plain]))[0]).toBe(plain);
  });

  it('a key id that is not configured fails naming the id', async () => {
    // A side with no keys at all says the same, instead of an "unknown encoding" further on.
    await expect(roundTrip([key('gone')], null, json('x'))).rejects.toThrow('payload encrypted with key id "gone", and no payload keys are configured: add it to AGENT_PAYLOAD_KEYS');
    const [sealed] = await new EncryptionPayloadCodec([key('gone')]).encode([json('x')]);
    const err = await new EncryptionPayloadCodec([key('k2')]).decode([sealed]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadDecryptionError);
    expect((err as PayloadDecryptionError).keyId).toBe('gone');
    expect(String(err)).toContain('payload encrypted with key id "gone", which is not among the configured keys (k2): add it to AGENT_PAYLOAD_KEYS');
  });

  it('a tampered ciphertext, a truncated one, another key under the same id, or a relabelled key id fail the tag, naming the id', async () => {
    const k = key('k1');
    const codec = new EncryptionPayloadCodec([k]);
    const [sealed] = await codec.encode([json('pay alice 10')]);
    const flipped = Buffer.from(sealed.data!);
    flipped[20] ^= 0x01;
    const tries: Payload[] = [
      { ...sealed, data: flipped },
      { ...sealed, data: sealed.data!.subarray(0, 20) },
      { ...sealed, data: sealed.data!.subarray(0, sealed.data!.length - 1) },
    ];
    for (const p of tries) {
      await expect(codec.decode([p])).rejects.toThrow('payload encrypted with key id "k1" does not verify: tampered, truncated, or another key under that id');
    }
    await expect(new EncryptionPayloadCodec([{ id: 'k1', key: key('x').key }]).decode([sealed])).rejects.toThrow('key id "k1" does not verify');
    // The key id is bound as associated data: the same bytes relabelled as another listed key's fail too.
    const two = new EncryptionPayloadCodec([k, { id: 'k2', key: k.key }]);
    const relabelled = { ...sealed, metadata: { ...sealed.metadata, [KEY_ID_METADATA]: enc.encode('k2') } };
    await expect(two.decode([relabelled])).rejects.toThrow('key id "k2" does not verify');
  });

  it('without keys, payloads are exactly as before: small ones plain JSON, large ones gzip', async () => {
    const { stored } = await roundTrip(null, null, json('plain'));
    expect(meta(stored, 'encoding')).toBe('json/plain');
    const big = await roundTrip(null, null, json('x'.repeat(40_000)));
    expect(meta(big.stored, 'encoding')).toBe(GZIP_ENCODING);
  });
});
