// A client for the CLI: TEMPORAL_ADDRESS, or the embedded dev server's port.
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type HarnessConfig } from '../common/config';
import { dataConverter } from '../common/payload-codec';

export async function connectClient(cfg: HarnessConfig = loadConfig()): Promise<Client> {
  const address = cfg.temporalAddress ?? `127.0.0.1:${cfg.devServer.port}`;
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5000 });
  } catch (err) {
    throw new Error(
      `cannot reach Temporal at ${address} (${String(err)}). Start the stack with \`npm start -- --serve\` ` +
        'or point TEMPORAL_ADDRESS at a running server.',
    );
  }
  return new Client({ connection, namespace: cfg.namespace, dataConverter: dataConverter() });
}
