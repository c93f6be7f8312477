// Libraries every run uses, evaluated once per workflow thread and shared by
// all the runs it hosts (Worker.create's bundlerOptions.preloadModules).
//
// Why: with a reusable V8 context the SDK evaluates the bundle's modules again
// for every run it starts and keeps them while the run is cached, so each
// cached run held its own copy of zod (its ~180 classes, and the schemas
// built at module scope): most of a parked run's ~2 MB in the worker, and ~3
// ms of every run's start. A preloaded module is evaluated before any run
// exists and its exports are deep-frozen by the SDK, so only stateless
// libraries belong here (zod, the noble hash and curve): zod keeps no per-run
// state (its registry is a WeakMap keyed by schema, a parse's state lives in
// the parse). Our own modules stay per run.
//
// Preloaded through this module rather than by the package name: zod's
// package says it has no side effects, so a bare `require('zod')` whose value
// is unused is dropped by the bundler and nothing would be preloaded.
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import * as zod from 'zod';

// zod settles its global configuration (the default locale, the memoizer) on
// the first schema built; done here, before the SDK freezes it, so that no run
// writes to a frozen object.
zod.object({ settled: zod.string() }).safeParse({ settled: 'yes' });

// The noble hashes and curve keep no state between calls; ed25519 builds its
// precomputed tables for the base point on the first verify, here rather
// than in a frozen object later.
const key = ed25519.utils.randomSecretKey(new Uint8Array(32).fill(7));
ed25519.verify(ed25519.sign(sha256(utf8ToBytes('settled')), key), sha256(utf8ToBytes('settled')), ed25519.getPublicKey(key));

export const preloaded = [zod, ed25519, sha256, utf8ToBytes];
