// The bearer token the codec server (AGENT_CODEC_TOKEN) and the ops server
// (AGENT_OPS_TOKEN) require on their requests: one check for both.
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A check of `Authorization: Bearer <token>` against `token`: `missing` when
 * the header carries no bearer token, `wrong` when it carries another, null
 * when it matches. Compared as SHA-256 digests: equal lengths for
 * timingSafeEqual, and no early exit that times the token out.
 */
export function bearerCheck(token: string): (authorization: string | undefined) => 'missing' | 'wrong' | null {
  const expected = digest(token);
  return (authorization) => {
    const given = typeof authorization === 'string' && /^Bearer /i.test(authorization) ? authorization.slice('Bearer '.length).trim() : null;
    if (given === null) return 'missing';
    return timingSafeEqual(digest(given), expected) ? null : 'wrong';
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();
