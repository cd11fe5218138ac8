// @postpilot/sdk: the Postpilot API's client (README.md).
export { Postpilot } from './client.ts';
export type { ClientOptions, RequestOptions, OperationSpec } from './transport.ts';
export { retryAfterMs, Transport } from './transport.ts';
export * from './errors.ts';
export type { MediaItem, UploadInput } from './media.ts';
export { verifyWebhook, type WebhookEvent, type HeaderSource } from './webhooks.ts';
export type { Answer, Body, Item, OperationId, Query, components, operations } from './types.ts';
export { OPERATIONS } from './generated/operations.ts';
