// Connections to Temporal for the worker (NativeConnection) and for clients (the API, the CLI).
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../lib/config.ts';

type TemporalConfig = Config['temporal'];

function connectionOptions(t: TemporalConfig) {
  return {
    address: t.address,
    tls: t.tls ? {} : undefined,
    apiKey: t.apiKey,
  };
}

export async function connectClient(t: TemporalConfig): Promise<Client> {
  const connection = await Connection.connect(connectionOptions(t));
  return new Client({ connection, namespace: t.namespace });
}

export async function connectWorker(t: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(connectionOptions(t));
}
