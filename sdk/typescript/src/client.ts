// The client: the generated namespaces (one method per operation, generated/operations.ts) over
// one transport, and the helpers HTTP leaves to the caller: media.upload (the three steps of an
// upload) and webhooks.verify (a delivery's Standard Webhooks signature).
import { resources } from './generated/operations.ts';
import { type MediaItem, type UploadInput, uploadMedia } from './media.ts';
import { type ClientOptions, type RequestOptions, Transport } from './transport.ts';
import { verifyWebhook } from './webhooks.ts';

function build(t: Transport, fetcher: typeof fetch) {
  const r = resources(t);
  return {
    ...r,
    media: {
      ...r.media,
      /** The file into the media library: create, PUT, complete, then the item once `ready`. */
      upload: (input: UploadInput, options?: RequestOptions): Promise<MediaItem> => uploadMedia(t, fetcher, input, options),
    },
    webhooks: {
      ...r.webhooks,
      /** A delivery's event once its signature is checked (`body` the raw text received). */
      verify: verifyWebhook,
    },
  };
}

type Namespaces = ReturnType<typeof build>;

export interface Postpilot extends Namespaces {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the namespaces are the class's fields, typed by the interface.
export class Postpilot {
  readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    Object.assign(this, build(this.transport, options.fetch ?? globalThis.fetch.bind(globalThis)));
  }
}
