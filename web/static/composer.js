// The composer: live character counts per selected channel, of the text as it will be sent
// (grapheme clusters, as the server counts them; data-count-rule="server" — X's and Mastodon's
// weighted counts, and every count while links become short links — from
// POST /web/api/text-lengths) for the post's text, each thread item and the first comment, as the
// Links section's "Shorten links" box has it now; the preview per chosen channel, drawn by the
// server from the form (POST /web/api/composer/preview, the Links section included);
// per-platform text fields for the selected platforms; the thread's items added, removed and
// reordered (renumbered thread_0, thread_1, … so the form sends them in order); which chosen
// platforms get the thread and the comment; the per-platform options of the chosen platforms,
// filled from what each chosen account can do; the publish-time field; uploads into the media picker.
(() => {
  'use strict';
  var graphemes = window.PP.graphemes;
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

  var SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/;
  var COPIED = ['id', 'name', 'data-testid', 'aria-describedby', 'aria-invalid', 'aria-required'];

  // What a chosen account offers, per field kind: [value, label] pairs from its capabilities.
  var CHOICES = {
    privacyLevels: (live, labels) => live.privacyLevelOptions.map((v) => [v, labels[v] || v]),
    boards: (live) => live.boards.map((b) => [b.id, b.name]),
    categories: (live) => live.categories.map((k) => [k.id, k.title]),
    flairs: (live) => live.flairs.map((f) => [f.id, f.text]),
  };

  // The per-platform options. A panel is shown while one of its platform's channels is chosen.
  // The fields that depend on the account (TikTok's privacy levels, Pinterest boards, YouTube
  // categories, Reddit flairs for the subreddit typed) become selects of what every chosen channel
  // of the platform offers, read from GET /web/api/channels/{id}/capabilities. TikTok's privacy
  // level is never chosen for the creator: the placeholder stays selected until they pick one. A
  // read that fails leaves the field as the server drew it (every level, or a text input for the
  // id) and says why; the interactions the creator has turned off are checked and locked.
  function optionPanels(form) {
    var panels = Array.prototype.slice.call(form.querySelectorAll('[data-options-platform]'));
    var reads = {};
    var states = [];
    function read(id, subreddit) {
      var key = `${id}|${subreddit || ''}`;
      if (!reads[key]) {
        var query = subreddit ? `?subreddit=${encodeURIComponent(subreddit)}` : '';
        reads[key] = window.PP.send('GET', `/web/api/channels/${encodeURIComponent(id)}/capabilities${query}`).catch((err) => {
          delete reads[key];
          return { live: null, liveError: { kind: 'transient', message: err.message } };
        });
      }
      return reads[key];
    }
    function stateOf(wrapper) {
      for (var i = 0; i < states.length; i++) if (states[i].wrapper === wrapper) return states[i];
      var control = wrapper.querySelector('[name]');
      var labels = {};
      if (control.tagName === 'SELECT')
        Array.prototype.forEach.call(control.options, (o) => {
          labels[o.value] = o.textContent;
        });
      var state = { wrapper: wrapper, original: control, current: control, labels: labels };
      states.push(state);
      return state;
    }
    function say(wrapper, text) {
      var hint = wrapper.querySelector('[data-live-hint]');
      if (hint) hint.textContent = text;
    }
    function restore(state) {
      if (state.current === state.original) return;
      var value = state.current.value;
      state.current.replaceWith(state.original);
      state.current = state.original;
      state.original.value = value;
    }
    function choose(state, placeholder, choices) {
      var select = document.createElement('select');
      COPIED.forEach((a) => {
        var v = state.original.getAttribute(a);
        if (v !== null) select.setAttribute(a, v);
      });
      var value = state.current.value;
      var all = [['', placeholder]].concat(choices);
      // A value already given (an edit, a form sent back) stays, named as not offered.
      if (value && !choices.some((c) => c[0] === value)) all.push([value, `${state.labels[value] || value} (not offered)`]);
      all.forEach((c) => {
        var o = document.createElement('option');
        o.value = c[0];
        o.textContent = c[1];
        select.appendChild(o);
      });
      select.value = value;
      state.current.replaceWith(select);
      state.current = select;
    }
    // The choices every chosen channel offers.
    function common(lists) {
      return lists[0].filter((c) => lists.every((l) => l.some((d) => d[0] === c[0])));
    }
    function creatorOff(panel, lives) {
      Array.prototype.forEach.call(panel.querySelectorAll('[data-creator-off]'), (box) => {
        var flag = box.getAttribute('data-creator-off');
        var off = lives.length > 0 && lives.every((l) => l[flag]);
        var hint = box.parentNode.querySelector('[data-creator-hint]');
        if (off && !box.disabled) {
          box.setAttribute('data-was-checked', box.checked ? 'true' : 'false');
          box.checked = true;
          box.disabled = true;
          if (hint) hint.textContent = '(turned off for this account on TikTok)';
        } else if (!off && box.disabled) {
          box.checked = box.getAttribute('data-was-checked') === 'true';
          box.disabled = false;
          if (hint) hint.textContent = '';
        }
      });
    }
    function fill(panel, platform, ids, subreddit, key) {
      var wrappers = Array.prototype.slice.call(panel.querySelectorAll('[data-live]'));
      var info = panel.querySelector('[data-live-info]');
      if (platform === 'REDDIT' && !subreddit) {
        wrappers.forEach((w) => {
          restore(stateOf(w));
          say(w, 'Type the subreddit above to choose from its flairs.');
        });
        return;
      }
      wrappers.forEach((w) => {
        say(w, `Reading ${w.querySelector('[data-live-hint]').getAttribute('data-says')}…`);
      });
      Promise.all(ids.map((id) => read(id, subreddit))).then((answers) => {
        if (panel.getAttribute('data-live-key') !== key) return;
        var failed = answers.filter((a) => a.liveError)[0];
        var lives = answers.map((a) => a.live).filter(Boolean);
        var complete = !failed && lives.length === answers.length;
        creatorOff(panel, complete ? lives : []);
        if (info)
          info.textContent = complete
            ? lives
                .map(
                  (l) =>
                    `Posting as ${l.creatorUsername ? `@${l.creatorUsername}` : 'this account'}${l.maxVideoDurationSec ? `, videos up to ${l.maxVideoDurationSec} s` : ''}.`,
                )
                .join(' ')
            : '';
        wrappers.forEach((w) => {
          var state = stateOf(w);
          var kind = w.getAttribute('data-live');
          var says = w.querySelector('[data-live-hint]').getAttribute('data-says');
          if (!complete) {
            restore(state);
            say(
              w,
              failed
                ? `Could not read ${says} (${failed.liveError.message}). ${state.original.tagName === 'SELECT' ? 'Every choice is listed.' : 'Type the id.'}`
                : '',
            );
            return;
          }
          var choices = common(lives.map((l) => CHOICES[kind](l, state.labels)));
          var placeholder = state.original.tagName === 'SELECT' ? state.original.options[0].textContent : 'None';
          var note = '';
          if (kind === 'boards') {
            placeholder = lives.every((l) => l.defaultBoardId) ? "The channel's board" : 'Choose a board';
            if (lives.some((l) => !l.boardsComplete)) note = 'The account has more boards than are listed.';
          } else if (kind === 'categories') placeholder = 'No category';
          else if (kind === 'flairs') {
            var required = lives.some((l) => l.flairRequired);
            placeholder = required ? 'Choose a flair' : 'No flair';
            note = choices.length ? (required ? `r/${subreddit} requires a flair.` : '') : `r/${subreddit} has no flairs.`;
          }
          choose(state, placeholder, choices);
          say(w, note);
        });
      });
    }
    // A per-media option's fields (Instagram's alt text) follow the media picker.
    function mediaFields() {
      var checked = {};
      Array.prototype.forEach.call(form.querySelectorAll('input[name="mediaIds"]:checked'), (b) => {
        checked[b.value] = true;
      });
      Array.prototype.forEach.call(form.querySelectorAll('[data-media-field]'), (el) => {
        el.hidden = !checked[el.getAttribute('data-media-field')];
      });
      Array.prototype.forEach.call(form.querySelectorAll('[data-no-media-fields]'), (p) => {
        p.hidden = Boolean(p.parentNode.querySelector('[data-media-field]:not([hidden])'));
      });
    }
    var timers = {};
    return (chosen) => {
      mediaFields();
      panels.forEach((panel) => {
        var platform = panel.getAttribute('data-options-platform');
        var ids = chosen.filter((c) => c.platform === platform).map((c) => c.id);
        panel.hidden = ids.length === 0;
        if (!ids.length || !panel.querySelector('[data-live], [data-creator-off]')) return;
        var subreddit;
        if (platform === 'REDDIT') {
          var input = form.querySelector('#subreddit');
          var typed = (input ? input.value : panel.getAttribute('data-subreddit') || '').trim().replace(/^\/?r\//i, '');
          subreddit = SUBREDDIT.test(typed) ? typed : null;
        }
        var key = `${ids.join(',')}|${subreddit || ''}`;
        if (panel.getAttribute('data-live-key') === key) return;
        panel.setAttribute('data-live-key', key);
        // A subreddit is read once typing stops.
        clearTimeout(timers[platform]);
        timers[platform] = setTimeout(() => fill(panel, platform, ids, subreddit, key), platform === 'REDDIT' ? 400 : 0);
      });
    };
  }

  // The preview: the server draws it (the preview links' renderer) from the form as it would be
  // sent, a moment after typing stops; only the answer to the latest request is shown. The answer
  // is markup the server escaped. A form unchanged since the last request is not sent again.
  function livePreview(form) {
    var box = form.querySelector('[data-preview-url]');
    var status = form.querySelector('[data-preview-status]');
    if (!box) return () => {};
    var url = box.getAttribute('data-preview-url');
    var postId = form.getAttribute('data-post-id');
    var draftId = form.getAttribute('data-draft-id');
    var timer = null;
    var seq = 0;
    function serialized() {
      var data = new FormData(form);
      data.delete('_csrf');
      return new URLSearchParams(data).toString();
    }
    // The page drew the preview of the form as it came.
    var last = serialized();
    return () => {
      var now = serialized();
      if (now === last) return;
      last = now;
      clearTimeout(timer);
      box.setAttribute('aria-busy', 'true');
      timer = setTimeout(() => {
        var mine = ++seq;
        var body = { form: now };
        if (postId) body.postId = postId;
        else if (draftId) body.draftId = draftId;
        window.PP.send('POST', url, body).then(
          (answer) => {
            if (mine !== seq) return;
            box.innerHTML = answer.html;
            box.removeAttribute('aria-busy');
            if (status) status.textContent = '';
          },
          (err) => {
            if (mine !== seq) return;
            box.removeAttribute('aria-busy');
            // The next change asks again.
            last = null;
            if (status) status.textContent = `The preview could not be updated: ${err.message}`;
          },
        );
      }, 300);
    };
  }

  document.addEventListener('DOMContentLoaded', () => {
    var form = document.querySelector('[data-testid="composer-form"]');
    if (!form) return;
    var edit = form.getAttribute('data-mode') === 'edit';
    var content = form.querySelector('#content');
    var channelBoxes = Array.prototype.slice.call(form.querySelectorAll('input[name="channelIds"]'));
    var platformBlocks = Array.prototype.slice.call(form.querySelectorAll('[data-platform-text]'));
    var options = optionPanels(form);
    // The Links section's box: while it is ticked every count is the server's (the page does not
    // rewrite links into short links).
    var shortenBox = form.querySelector('[data-links-shorten]');
    var shortenHint = form.querySelector('[data-shorten-hint]');
    function shortenLinks() {
      return Boolean(shortenBox?.checked);
    }

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
      window.PP.showCount(li, n, `${LABEL[platform] || platform} ${li.querySelector('span').textContent.trim()}`);
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
        var texts = lis.map((li) => {
          var text = { channelId: li.getAttribute('data-channel-id'), text: textOf(li) };
          if (li.getAttribute('data-count-kind') === 'comment') text.kind = 'comment';
          return text;
        });
        // The endpoint takes 100 texts a request (a long thread on several channels has more).
        var batches = [];
        for (var i = 0; i < texts.length; i += 100) {
          var request = { texts: texts.slice(i, i + 100) };
          if (shortenLinks()) request.links = { shorten: true };
          batches.push(window.PP.send('POST', '/web/api/text-lengths', request));
        }
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
      var shorten = shortenLinks();
      if (shortenHint) shortenHint.hidden = !shorten;
      counts.forEach((li) => {
        li.hidden = !ids[li.getAttribute('data-channel-id')];
        if (shorten || li.getAttribute('data-count-rule') === 'server') {
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
      options(channelBoxes.filter((b) => ids[b.value]).map((b) => ({ id: b.value, platform: b.getAttribute('data-platform') })));
      preview();
    }
    // Set once the thread's blank slots are gone, so the preview starts from the form as shown.
    var preview = () => {};
    form.addEventListener('input', update);
    form.addEventListener('change', update);
    threadItems(form, update);
    preview = livePreview(form);

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
              // Checked without a change event: the preview and the options follow it.
              update();
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
