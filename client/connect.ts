// A client for the CLI: the configured Temporal (TEMPORAL_ADDRESS or a
// profile of the temporal CLI's config file), or the embedded dev server's
// port. With tracing on, its calls (the run's start first) are spans.
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { loadConfig, temporalConnectOptions, type ProcessConfig } from '../node/config.js';
import { dataConverter } from '../node/payload-codec.js';
import { answersHttp, cannotReach, ConnectionRefused, connectionRefused, errorLine, HostNotFound, hostNotFound, notTemporal, refusedAt, transportFailure } from '../node/connection-errors.js';
import { startTracing } from '../node/tracing.js';
import { assertTemporalVersions, CLIENT_SDK_PACKAGES } from '../node/temporal-versions.js';

/**
 * A Temporal client with the harness's payload codec, connected as `cfg`
 * says (default: the environment, as the CLI reads it); a refused or
 * unreachable server is one line saying which address and what to do.
 */
export async function connectClient(cfg: ProcessConfig = loadConfig()): Promise<Client> {
  // An @temporalio version outside the peer range: one line now, not runs that hang later.
  assertTemporalVersions(CLIENT_SDK_PACKAGES);
  // A bad AGENT_PAYLOAD_KEYS stops the command before it connects, naming the entry.
  dataConverter();
  const address = cfg.temporalAddress ?? `127.0.0.1:${cfg.devServer.port}`;
  let connection: Connection;
  try {
    // A refused port is told apart from a server that does not answer (refusedAt).
    connection = await Promise.race([Connection.connect({ ...temporalConnectOptions(cfg, address), connectTimeout: 5000 }), refusedAt(address)]);
  } catch (err) {
    const source = cfg.temporalAddress ? cfg.temporalConnection.source : 'TEMPORAL_DEV_PORT';
    if (err instanceof HostNotFound) throw new Error(hostNotFound(address, source));
    // No gRPC answer in time: a plaintext address that answers HTTP/1.1 is a web or HTTP API port, named as such.
    if (!(err instanceof ConnectionRefused) && !temporalConnectOptions(cfg, address).tls && (await answersHttp(address)) === 'http') {
      throw new Error(notTemporal(address, source, 'it answers HTTP/1.1, not gRPC'));
    }
    if (err instanceof ConnectionRefused) {
      throw new Error(cfg.temporalAddress ? connectionRefused(address, cfg.temporalConnection.source) : `${connectionRefused(address, 'TEMPORAL_DEV_PORT')}; or start the stack with \`npm start -- --serve\``);
    }
    throw new Error(
      cfg.temporalAddress
        ? cannotReach(address, cfg.temporalConnection.source, err)
        : `cannot reach the Temporal server at ${address} (TEMPORAL_DEV_PORT): ${transportFailure(errorLine(err)) ?? errorLine(err)}; start the stack with \`npm start -- --serve\` ` +
            'or point TEMPORAL_ADDRESS (or a profile: TEMPORAL_PROFILE) at a running server',
    );
  }
  return harnessClient(connection, cfg);
}

/** A client with the harness's data converter and, when tracing is on, the OpenTelemetry client interceptor. */
export function harnessClient(connection: Connection, cfg: ProcessConfig): Client {
  const tracing = startTracing(cfg.tracing, 'agent-harness-client');
  return new Client({
    connection,
    namespace: cfg.namespace,
    dataConverter: dataConverter(),
    ...(tracing ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
  });
}
