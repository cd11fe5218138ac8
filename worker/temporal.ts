// Connections to Temporal for the worker (NativeConnection) and for clients (the API, the CLI).
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporal as proto } from '@temporalio/proto';
import type { Config } from '../lib/config.ts';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes.ts';

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

/**
 * A client that connects on first use: the API starts (and serves everything that does not need
 * Temporal) while Temporal is down; calls made meanwhile fail within their deadline
 * (domain/temporal-calls.ts) and succeed again once it is back.
 */
export function lazyClient(t: TemporalConfig): Client {
  return new Client({ connection: Connection.lazy(connectionOptions(t)), namespace: t.namespace });
}

export async function connectWorker(t: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(connectionOptions(t));
}

/**
 * Registers the custom search attributes (workflows/search-attributes.ts) in the namespace.
 * Already-registered ones are fine; a cluster that refuses (e.g. no operator permission) must
 * have them created by its operator: `temporal operator search-attribute create --name PostId --type Keyword`.
 */
export async function ensureSearchAttributes(connection: Pick<Connection, 'operatorService'>, namespace: string): Promise<void> {
  const searchAttributes = Object.fromEntries(
    SEARCH_ATTRIBUTES.map((k) => [k.name, proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
  );
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  } catch (err) {
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}
