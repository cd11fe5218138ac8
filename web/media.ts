// The media library: a grid of the organization's items (thumbnails as signed URLs from the
// object store) and uploads from the browser through the same three steps as the API — create
// the upload, PUT the bytes to the returned URL, complete — via session-authenticated endpoints.
import { refuseUnstorableBody, router } from '../http/router.ts';
import { MediaItem } from '../db/entities/index.ts';
import { ALT_TEXT_CHARS, completeUpload, createUpload, getMediaItem, mediaView, UploadBody, type MediaView } from '../domain/media.ts';
import { jsonRoute, pageRoute, type PageContext, type Web } from './context.ts';
import { auditNote } from './audit.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, jsonResponse } from './http.ts';
import { layout } from './layout.ts';
import { formatDateTime } from './time.ts';
import { statusLabel } from './ui.ts';

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function mediaCard(m: MediaView, tz: string): SafeHtml {
  return html`<li class="media-card status-${m.status}" data-testid="media-item" data-media-id="${m.id}" data-status="${m.status}">
  <figure>
    ${
      m.thumbnailUrl
        ? html`<img src="${m.thumbnailUrl}" alt="${m.altText ?? ''}" loading="lazy" data-testid="media-thumbnail">`
        : html`<div class="media-placeholder" role="img" aria-label="${m.type} file" data-testid="media-thumbnail">${m.type}</div>`
    }
    <figcaption>
      <span class="file-name" data-testid="media-file-name">${m.fileName}</span>
      <span class="status status-${m.status}" data-testid="media-status"${m.error ? html` title="${m.error}"` : ''}>${statusLabel(m.status)}</span>
      <span class="hint">${m.type} · ${humanSize(m.sizeBytes)}${m.width && m.height ? ` · ${m.width}×${m.height}` : ''} · <time datetime="${m.createdAt}">${formatDateTime(new Date(m.createdAt), tz)}</time></span>
      <span class="alt" data-testid="media-alt">${m.altText ? html`Alt text: ${m.altText}` : html`<em>No alt text</em>`}</span>
      ${m.error ? html`<span class="error-text" data-testid="media-error">${m.error}</span>` : ''}
    </figcaption>
  </figure>
</li>`;
}

async function mediaPage(web: Web, ctx: PageContext): Promise<Response> {
  const storage = web.deps.storage;
  const items = storage
    ? await ctx.em.find(
        MediaItem,
        { organization: ctx.signedIn.organization.id },
        { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 200 },
      )
    : [];
  const views = storage ? await Promise.all(items.map((m) => mediaView(m, storage))) : [];
  const body = html`<h1>Media library</h1>
${storage ? '' : html`<p class="notice" data-testid="media-not-configured">Object storage is not configured on this server.</p>`}
<section aria-labelledby="upload-title" class="upload-panel">
  <h2 id="upload-title">Upload</h2>
  <form class="stack" data-testid="media-upload-form" data-upload-form>
    <div class="field">
      <label for="media-file">File</label>
      <input type="file" id="media-file" name="file" required data-testid="media-file" accept="image/jpeg,image/png,image/webp,image/gif,video/mp4,video/quicktime,application/pdf,audio/mpeg,audio/mp4,audio/wav" aria-describedby="media-file-hint">
      <p class="hint" id="media-file-hint">Images (JPEG, PNG, WebP) and GIFs up to 20 MB, videos (MP4, MOV) up to 1 GB, PDF up to 100 MB, audio up to 200 MB.</p>
    </div>
    <div class="field">
      <label for="media-alt">Alt text</label>
      <input type="text" id="media-alt" name="altText" maxlength="${ALT_TEXT_CHARS}" data-testid="media-alt-input" aria-describedby="media-alt-hint">
      <p class="hint" id="media-alt-hint">Describe the image for people who cannot see it.</p>
    </div>
    <button type="submit" class="primary" data-testid="media-upload-submit">Upload</button>
    <p class="upload-status" role="status" data-testid="media-upload-status"></p>
  </form>
</section>
<section aria-labelledby="library-title">
  <h2 id="library-title">Library</h2>
  ${views.length ? '' : html`<p data-testid="media-empty">No media yet.</p>`}
  <ul class="media-grid" data-testid="media-grid">${views.map((m) => mediaCard(m, ctx.tz))}</ul>
</section>`;
  return htmlResponse(layout({ title: 'Media', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'media', scripts: ['media.js'] }));
}

export function mediaRoutes(web: Web) {
  const need = () => {
    if (!web.deps.storage || !web.deps.temporal) throw new Error('object storage and Temporal must be configured for media');
    return { storage: web.deps.storage, temporal: web.deps.temporal };
  };
  return router()
    .get(
      '/media',
      pageRoute(web, 'read', (ctx) => mediaPage(web, ctx)),
    )
    .post(
      '/web/api/media/uploads',
      jsonRoute(web, 'media.write', async (ctx) => {
        const { storage, temporal } = need();
        const body = ctx.body as { fileName: string; mimeType: string; fileSize: number; altText?: string };
        const { item, upload } = await createUpload(ctx.em, storage, temporal, {
          organizationId: ctx.signedIn.organization.id,
          fileName: body.fileName,
          mimeType: body.mimeType,
          fileSize: body.fileSize,
          altText: body.altText?.trim() ? body.altText.trim() : null,
          now: ctx.now,
        });
        auditNote(ctx, { resourceId: item.id });
        return jsonResponse(
          {
            media: await mediaView(item, storage),
            upload: { method: upload.method, url: upload.url, headers: upload.headers, expiresAt: upload.expiresAt.toISOString() },
            next: `PUT the file to upload.url with upload.headers, then POST /web/api/media/${item.id}/complete`,
          },
          { status: 201 },
        );
      }),
      { body: UploadBody, transform: refuseUnstorableBody },
    )
    .post(
      '/web/api/media/:id/complete',
      jsonRoute(web, 'media.write', async (ctx) => {
        const { storage, temporal } = need();
        const item = await completeUpload(ctx.em, temporal, ctx.signedIn.organization.id, ctx.params.id ?? '');
        return jsonResponse(await mediaView(item, storage));
      }),
      { parse: 'none' },
    )
    .get(
      '/web/api/media/:id',
      jsonRoute(web, 'read', async (ctx) =>
        jsonResponse(await mediaView(await getMediaItem(ctx.em, ctx.signedIn.organization.id, ctx.params.id ?? ''), need().storage)),
      ),
    );
}
