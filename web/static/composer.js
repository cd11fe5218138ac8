// The composer: live character counts per selected channel (grapheme clusters, as the server
// counts them; X's and Mastodon's weighted counts, data-count-rule="server", come from
// POST /web/api/text-lengths) for the post's text, each thread item and the first comment;
// per-platform text fields for the selected platforms; the thread's items added, removed and
// reordered (renumbered thread_0, thread_1, … so the form sends them in order); which chosen
// platforms get the thread and the comment; the publish-time field; uploads into the media picker.
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

  var SLOT = /thread([-_])\d+/g;
  var RENAMED = ['id', 'for', 'name', 'aria-describedby', 'data-count-source'];

  // The thread's items: the server's blank slots (there for forms without JavaScript) go; "Add a
  // reply" clones the template; each item can move up, down or go. After each change every item's
  // fields are renamed for its place, so the form sends thread_0, thread_1, … in the order shown.
  function threadItems(form, changed) {
    var list = form.querySelector('[data-testid="thread-items"]');
    var template = form.querySelector('template[data-thread-template]');
    var add = form.querySelector('[data-thread-add]');
    var status = form.querySelector('[data-thread-status]');
    if (!list || !template || !add) return;
    var max = Number(list.getAttribute('data-max-items'));
    function items() {
      return Array.prototype.slice.call(list.children);
    }
    function blank(li) {
      return li.querySelector('textarea').value.trim() === '' && !li.querySelector('input[type="checkbox"]:checked');
    }
    function renumber() {
      var all = items();
      all.forEach((li, i) => {
        Array.prototype.forEach.call(li.querySelectorAll('*'), (el) => {
          RENAMED.forEach((name) => {
            var v = el.getAttribute(name);
            if (v) el.setAttribute(name, v.replace(SLOT, `thread$1${i}`));
          });
        });
        Array.prototype.forEach.call(li.querySelectorAll('[data-thread-number]'), (n) => {
          n.textContent = String(i + 1);
        });
        var up = li.querySelector('[data-thread-move="up"]');
        var down = li.querySelector('[data-thread-move="down"]');
        up.disabled = i === 0;
        down.disabled = i === all.length - 1;
        up.setAttribute('aria-label', `Move reply ${i + 1} up`);
        down.setAttribute('aria-label', `Move reply ${i + 1} down`);
        li.querySelector('[data-thread-remove]').setAttribute('aria-label', `Remove reply ${i + 1}`);
      });
      add.disabled = all.length >= max;
      changed();
    }
    items().forEach((li) => {
      if (li.hasAttribute('data-blank-slot') && blank(li)) li.parentNode.removeChild(li);
    });
    Array.prototype.forEach.call(form.querySelectorAll('[data-js-only]'), (el) => {
      el.hidden = false;
    });
    add.addEventListener('click', () => {
      var li = template.content.firstElementChild.cloneNode(true);
      li.querySelector('[data-js-only]').hidden = false;
      list.appendChild(li);
      renumber();
      li.querySelector('textarea').focus();
    });
    list.addEventListener('click', (e) => {
      var button = e.target.closest('button');
      if (!button) return;
      var li = button.closest('[data-thread-item]');
      var move = button.getAttribute('data-thread-move');
      if (button.hasAttribute('data-thread-remove')) {
        var next = li.nextElementSibling || li.previousElementSibling;
        list.removeChild(li);
        renumber();
        (next ? next.querySelector('textarea') : add).focus();
        status.textContent = 'Reply removed.';
        return;
      }
      var other = move === 'up' ? li.previousElementSibling : move === 'down' ? li.nextElementSibling : null;
      if (!other) return;
      list.insertBefore(move === 'up' ? li : other, move === 'up' ? other : li);
      renumber();
      // The button stays focused unless the move disabled it (top or bottom): then its pair.
      (button.disabled ? li.querySelector(`[data-thread-move="${move === 'up' ? 'down' : 'up'}"]`) : button).focus();
      status.textContent = `Moved to reply ${items().indexOf(li) + 1}.`;
    });
    renumber();
  }

  document.addEventListener('DOMContentLoaded', () => {
    var form = document.querySelector('[data-testid="composer-form"]');
    if (!form) return;
    var edit = form.getAttribute('data-mode') === 'edit';
    var content = form.querySelector('#content');
    var channelBoxes = Array.prototype.slice.call(form.querySelectorAll('input[name="channelIds"]'));
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
    // A thread item's or the first comment's counter names its field; the post's counters count
    // the platform's own text, else the main text.
    function textOf(li) {
      var source = li.getAttribute('data-count-source');
      if (source) {
        var field = document.getElementById(source);
        return field ? field.value : '';
      }
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
        // The endpoint takes 100 texts a request (a long thread on several channels has more).
        var batches = [];
        for (var i = 0; i < texts.length; i += 100)
          batches.push(window.PP.send('POST', '/web/api/text-lengths', { texts: texts.slice(i, i + 100) }));
        Promise.all(batches).then(
          (bodies) => {
            if (seq !== serverSeq) return;
            var counted = [];
            bodies.forEach((body) => {
              counted = counted.concat(body.counts);
            });
            counted.forEach((c, i) => {
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
      // Thread items come and go: their counters are looked up each time.
      var counts = Array.prototype.slice.call(form.querySelectorAll('li[data-count-rule]'));
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
      if (noCounts) noCounts.hidden = counts.some((li) => !li.hidden && li.getAttribute('data-testid') === 'char-count');
      var chosen = Object.keys(platforms).length > 0;
      Array.prototype.forEach.call(form.querySelectorAll('[data-follow-platform]'), (li) => {
        li.hidden = !platforms[li.getAttribute('data-follow-platform')];
      });
      var noTargets = form.querySelector('[data-no-follow-targets]');
      if (noTargets) noTargets.hidden = chosen;
      platformBlocks.forEach((block) => {
        var platform = block.getAttribute('data-platform-text');
        block.hidden = !platforms[platform] && platformText(platform) === null;
      });
    }
    form.addEventListener('input', update);
    form.addEventListener('change', update);
    threadItems(form, update);

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
