// The composer: live character counts per selected channel (grapheme clusters, as the server
// counts them; X's and Mastodon's weighted counts, data-count-rule="server", come from
// POST /web/api/text-lengths), per-platform text fields for the selected platforms, the
// publish-time field, and uploads straight into the media picker.
(() => {
  'use strict';
  var segmenter = typeof Intl !== 'undefined' && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  function graphemes(text) {
    if (!segmenter) return Array.from(text).length;
    var n = 0;
    var it = segmenter.segment(text)[Symbol.iterator]();
    while (!it.next().done) n++;
    return n;
  }
  var LABEL = {
    X: 'X',
    BLUESKY: 'Bluesky',
    THREADS: 'Threads',
    LINKEDIN: 'LinkedIn',
    MASTODON: 'Mastodon',
    INSTAGRAM: 'Instagram',
    FACEBOOK: 'Facebook',
    TIKTOK: 'TikTok',
    YOUTUBE: 'YouTube',
    PINTEREST: 'Pinterest',
    REDDIT: 'Reddit',
    TELEGRAM: 'Telegram',
    DISCORD: 'Discord',
  };

  document.addEventListener('DOMContentLoaded', () => {
    var form = document.querySelector('[data-testid="composer-form"]');
    if (!form) return;
    var edit = form.getAttribute('data-mode') === 'edit';
    var content = form.querySelector('#content');
    var channelBoxes = Array.prototype.slice.call(form.querySelectorAll('input[name="channelIds"]'));
    var counts = Array.prototype.slice.call(form.querySelectorAll('[data-testid="char-count"]'));
    var platformBlocks = Array.prototype.slice.call(form.querySelectorAll('[data-platform-text]'));

    function selectedIds() {
      var ids = {};
      channelBoxes.forEach((b) => {
        if (edit || b.checked) ids[b.value] = true;
      });
      return ids;
    }
    function platformText(platform) {
      var area = form.querySelector(`textarea[name="text_${platform}"]`);
      return area && area.value.trim() !== '' ? area.value : null;
    }
    function showCount(li, n) {
      var platform = li.getAttribute('data-platform');
      var max = Number(li.getAttribute('data-max-chars'));
      li.setAttribute('data-count', String(n));
      li.setAttribute('data-over', n > max ? 'true' : 'false');
      li.classList.toggle('over', n > max);
      var out = li.querySelector('output');
      out.textContent = `${n} / ${max}`;
      var name = li.querySelector('span').textContent.trim();
      out.setAttribute('aria-label', `${LABEL[platform] || platform} ${name}: ${n} of ${max} characters${n > max ? ', too long' : ''}`);
    }
    function textOf(li) {
      var own = platformText(li.getAttribute('data-platform'));
      return own !== null ? own : content.value;
    }
    // Weighted counts: one request for all of them, a moment after typing stops; only the answer
    // to the latest request is shown.
    var serverTimer = null;
    var serverSeq = 0;
    function askServer(lis) {
      clearTimeout(serverTimer);
      if (!lis.length) return;
      lis.forEach((li) => {
        li.setAttribute('data-pending', 'true');
      });
      serverTimer = setTimeout(() => {
        var seq = ++serverSeq;
        var texts = lis.map((li) => ({ channelId: li.getAttribute('data-channel-id'), text: textOf(li) }));
        window.PP.send('POST', '/web/api/text-lengths', { texts: texts }).then(
          (body) => {
            if (seq !== serverSeq) return;
            body.counts.forEach((c, i) => {
              showCount(lis[i], c.length);
              lis[i].removeAttribute('data-pending');
            });
          },
          () => {
            if (seq === serverSeq)
              lis.forEach((li) => {
                li.removeAttribute('data-pending');
              });
          },
        );
      }, 150);
    }
    function update() {
      var ids = selectedIds();
      var platforms = {};
      var weighted = [];
      channelBoxes.forEach((b) => {
        if (ids[b.value]) platforms[b.getAttribute('data-platform')] = true;
      });
      counts.forEach((li) => {
        li.hidden = !ids[li.getAttribute('data-channel-id')];
        if (li.getAttribute('data-count-rule') === 'server') {
          if (!li.hidden) weighted.push(li);
        } else {
          showCount(li, graphemes(textOf(li)));
        }
      });
      askServer(weighted);
      var noCounts = form.querySelector('[data-no-counts]');
      if (noCounts) noCounts.hidden = counts.some((li) => !li.hidden);
      platformBlocks.forEach((block) => {
        var platform = block.getAttribute('data-platform-text');
        block.hidden = !platforms[platform] && platformText(platform) === null;
      });
    }
    form.addEventListener('input', update);
    form.addEventListener('change', update);

    // "Publish now" and "Add to queue" make the time field irrelevant.
    var time = form.querySelector('#publishAt');
    var radios = form.querySelectorAll('input[name="when"]');
    function syncWhen() {
      var now = form.querySelector('input[name="when"]:checked');
      if (time && now) time.disabled = now.value !== 'later';
    }
    Array.prototype.forEach.call(radios, (r) => {
      r.addEventListener('change', syncWhen);
    });
    if (time)
      time.addEventListener('focus', () => {
        var later = form.querySelector('#when-later');
        if (later) later.checked = true;
      });
    syncWhen();

    // Uploads from the composer land in the picker, already selected.
    var upload = form.querySelector('input[type="file"][data-upload-into]');
    if (upload) {
      var list = form.querySelector('[data-testid="media-choices"]');
      var status = form.querySelector('[data-testid="upload-status"]');
      var alt = form.querySelector('#composer-upload-alt');
      upload.addEventListener('change', () => {
        var file = upload.files?.[0];
        if (!file) return;
        upload.disabled = true;
        window.PP.upload(file, alt ? alt.value.trim() : '', (t) => {
          status.textContent = t;
        })
          .then(
            (item) => {
              var li = document.createElement('li');
              var box = document.createElement('input');
              box.type = 'checkbox';
              box.id = `media-${item.id}`;
              box.name = 'mediaIds';
              box.value = item.id;
              box.checked = true;
              box.setAttribute('data-testid', 'media-option');
              box.setAttribute('data-media-type', item.type);
              var label = document.createElement('label');
              label.htmlFor = box.id;
              if (item.thumbnailUrl) {
                var img = document.createElement('img');
                img.src = item.thumbnailUrl;
                img.alt = '';
                img.width = 64;
                img.height = 64;
                label.appendChild(img);
              }
              var name = document.createElement('span');
              name.className = 'file-name';
              name.textContent = item.fileName;
              label.appendChild(name);
              li.appendChild(box);
              li.appendChild(label);
              list.insertBefore(li, list.firstChild);
              var empty = form.querySelector('[data-empty-media]');
              if (empty) empty.hidden = true;
              upload.value = '';
              if (alt) alt.value = '';
            },
            (err) => {
              status.textContent = `Upload failed: ${err.message}`;
            },
          )
          .then(() => {
            upload.disabled = false;
          });
      });
    }
    update();
  });
})();
