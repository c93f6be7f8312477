// The failure converter of a worker whose payloads are encrypted
// (AGENT_PAYLOAD_KEYS): Temporal's own, with encodeCommonAttributes, so a
// failure's message and stack trace travel as an encoded payload (encrypted by
// the payload codec) instead of in clear in history. A tool's or the model's
// error text in an activity failure is then as private as its result.
// Clients decode it whatever their own converter (Temporal's default reads
// encoded attributes). A CommonJS file: the SDK loads it by path with
// require(), in the worker and in the workflow bundle (node/codec-plugin.ts).
'use strict';
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
