// Shared by every page: the viewer's time zone (cookie pp_tz; the person's zone on first
// sign-in), the CSRF token for fetches, copy buttons, and the three-step media upload used by the media library and the composer.
(() => {
  'use strict';
  var PP = (window.PP = window.PP || {});

  // Characters as the server counts them (grapheme clusters): the composer's and the inbox's counters.
  var segmenter = typeof Intl !== 'undefined' && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  PP.graphemes = (text) => {
    if (!segmenter) return Array.from(text).length;
    var n = 0;
    var it = segmenter.segment(text)[Symbol.iterator]();
    while (!it.next().done) n++;
    return n;
  };

  /** A counter (li[data-max-chars] with an output) shows n against its limit; `label` names it for screen readers. */
  PP.showCount = (li, n, label) => {
    var max = Number(li.getAttribute('data-max-chars'));
    li.setAttribute('data-count', String(n));
    li.setAttribute('data-over', n > max ? 'true' : 'false');
    li.classList.toggle('over', n > max);
    var out = li.querySelector('output');
    out.textContent = `${n} / ${max}`;
    out.setAttribute('aria-label', `${label}: ${n} of ${max} characters${n > max ? ', too long' : ''}`);
  };

  PP.csrf = () => {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute('content') : '';
  };

  PP.timeZone = () => {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    } catch (e) {
      return 'UTC';
    }
  };

  /** Reads a JSON answer; throws an Error with the API's message (and field errors) when not ok. */
  PP.json = (res) =>
    res.text().then((text) => {
      var body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch (e) {
        body = null;
      }
      if (!res.ok) {
        var err = body?.error;
        var msg = err ? err.message : `Request failed (HTTP ${res.status})`;
        var fields = err?.details?.fields;
        if (fields?.length) msg += ` ${fields.map((f) => (f.path ? `${f.path}: ` : '') + f.message).join('; ')}`;
        var e = new Error(msg);
        e.status = res.status;
        throw e;
      }
      return body;
    });

  PP.send = (method, url, body) => {
    var headers = { 'x-csrf-token': PP.csrf() };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(url, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    }).then(PP.json);
  };

  /** Create upload → PUT the bytes → complete, as the API's three steps. Resolves to the media item. */
  PP.upload = (file, altText, status) => {
    status = status || (() => {});
    status(`Preparing the upload of ${file.name}…`);
    var body = { fileName: file.name, mimeType: file.type || 'application/octet-stream', fileSize: file.size };
    if (altText) body.altText = altText;
    return PP.send('POST', '/web/api/media/uploads', body)
      .then((created) => {
        status(`Uploading ${file.name}…`);
        return fetch(created.upload.url, { method: created.upload.method || 'PUT', headers: created.upload.headers, body: file }).then(
          (put) => {
            if (!put.ok) return PP.json(put);
            status(`Processing ${file.name}…`);
            return PP.send('POST', `/web/api/media/${encodeURIComponent(created.media.id)}/complete`);
          },
        );
      })
      .then((item) => {
        if (item.status === 'failed') throw new Error(`${file.name} could not be used: ${item.error || 'processing failed'}`);
        status(`${file.name} uploaded.`);
        return item;
      });
  };

  // The browser's zone goes into the pp_tz cookie (the sign-in form stores it as the person's
  // zone on the first sign-in). A signed-in person without a zone yet (a session from before)
  // gets it once through the API, and the page is shown again in it (never a page that answered a
  // form: that would send the form again). A zone the person chose is never replaced.
  function timeZone() {
    var tz = PP.timeZone();
    var m = document.cookie.match(/(?:^|;\s*)pp_tz=([^;]*)/);
    var current = m ? decodeURIComponent(m[1]) : '';
    if (current !== tz) {
      document.cookie = `pp_tz=${encodeURIComponent(tz)}; path=/; max-age=31536000; samesite=lax${location.protocol === 'https:' ? '; secure' : ''}`;
    }
    if (document.body.getAttribute('data-tz-unset') === 'true') {
      PP.send('PUT', '/web/api/me/time-zone', { timeZone: tz, ifUnset: true }).then(
        (saved) => {
          document.body.removeAttribute('data-tz-unset');
          var shown = document.body.getAttribute('data-tz');
          if (saved.timeZone !== shown && document.body.getAttribute('data-tz-reload') === 'true' && !/[?&]tz=/.test(location.search))
            location.reload();
        },
        () => {
          /* an unknown zone: the person can choose one on the settings page */
        },
      );
    }
    // The settings page's "Use this browser's time zone" button.
    document.querySelectorAll('[data-browser-tz]').forEach((button) => {
      var input = button.form?.querySelector('[data-browser-tz-input]');
      if (!input) return;
      input.value = tz;
      button.textContent = `Use this browser's time zone (${tz})`;
      button.hidden = false;
    });
  }

  function copyButtons() {
    document.querySelectorAll('[data-copy]').forEach((button) => {
      button.addEventListener('click', () => {
        var input = document.getElementById(button.getAttribute('data-copy'));
        if (!input) return;
        var done = () => {
          button.textContent = 'Copied';
          button.setAttribute('data-copied', 'true');
        };
        if (navigator.clipboard?.writeText) {
          navigator.clipboard.writeText(input.value).then(done, () => {
            input.select();
          });
        } else {
          input.select();
          try {
            document.execCommand('copy');
            done();
          } catch (e) {
            /* the key stays selected for the user */
          }
        }
      });
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    timeZone();
    copyButtons();
  });
})();
