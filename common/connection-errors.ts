// A failure to reach the Temporal server, in the words a person acts on: what
// could not be reached, why in a few words, and what to check. Shared by the
// worker, the CLI and `npm start`.

/** The first line of an error's message. */
export function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0].trim();
}

/** A short reason for a transport failure (the SDK core's or gRPC's words), or null when the text is about something else. */
export function transportFailure(text: string): string | null {
  if (!/Unavailable|tcp connect error|transport error|Connection (refused|reset)|broken pipe|dns error|Failed to connect before the deadline|DeadlineExceeded|deadline exceeded/i.test(text)) return null;
  return unreachableReason(text);
}

/** A short reason for a person, from an SDK or gRPC error text. */
export function unreachableReason(text: string): string {
  if (/Connection refused/i.test(text)) return 'connection refused';
  if (/dns error|Name or service not known|ENOTFOUND/i.test(text)) return 'the host name does not resolve';
  if (/deadline|timed out|timeout/i.test(text)) return 'no answer in time';
  if (/Connection reset|broken pipe|transport error|h2 protocol/i.test(text)) return 'connection dropped';
  return 'unavailable';
}

/**
 * The connection to the server failed. `source`: where the address came from
 * (TEMPORAL_ADDRESS, a profile of the temporal CLI's config file, the dev
 * server's port).
 */
export function cannotReach(address: string, source: string, err: unknown): string {
  const text = errorLine(err);
  const reason = transportFailure(text) ?? text.replace(/^(TransportError|Error): /, '');
  return `cannot reach the Temporal server at ${address} (${source}): ${reason}; check that the server is running and that ${source} names it`;
}
