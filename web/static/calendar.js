// Live posts: every 3 s (while the tab is visible) the page's feed is fetched and each post's
// status, errors and per-channel results (and on a post's page, each item of a channel's thread)
// are updated in place; posts deleted elsewhere leave.
// On the month and week views a scheduled post can be dragged to another day (same time of
// day), through the same checks and workflow Update as PATCH /v1/posts/{id}; a draft (marked on
// its day, or offered beside the calendar without one) is dragged onto a day to mean it for that
// day (PATCH /web/api/drafts/{id}: its time of day kept, 09:00 without one).
(() => {
  'use strict';
  var POLL_MS = 3000;
  var STATUS = { scheduled: 'Scheduled', publishing: 'Publishing', published: 'Published', failed: 'Failed', draft: 'Waiting' };
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

  function say(text) {
    var region = document.getElementById('calendar-message');
    if (region) region.textContent = text;
  }

  function channelName(el, channelId) {
    var badge = el.querySelector(`[data-channel-id="${channelId}"]`);
    return badge ? badge.getAttribute('data-channel-name') : channelId;
  }

  function errorsOf(el, post) {
    return post.channels
      .filter((c) => c.status === 'failed' && c.error)
      .map((c) => `${LABEL[c.platform] || c.platform} (${channelName(el, c.channelId)}): ${c.error}`);
  }

  function setStatusClass(el, status) {
    Array.prototype.slice.call(el.classList).forEach((c) => {
      if (c.indexOf('status-') === 0) el.classList.remove(c);
    });
    el.classList.add(`status-${status}`);
  }

  /** A status badge's text and class, and a result cell's error or live link (testids `<prefix>-error` / `<prefix>-url`). */
  function showOutcome(row, x, statusTestId, prefix) {
    row.setAttribute('data-status', x.status);
    var s = row.querySelector(`[data-testid="${statusTestId}"]`);
    if (s) {
      s.textContent = STATUS[x.status] || x.status;
      setStatusClass(s, x.status);
    }
    var result = row.querySelector(`[data-testid="${prefix}-result"]`);
    if (!result) return;
    result.textContent = '';
    if (x.error) {
      var err = document.createElement('span');
      err.className = 'error-text';
      err.setAttribute('data-testid', `${prefix}-error`);
      err.textContent = x.error;
      result.appendChild(err);
    } else if (x.url && /^https?:\/\//i.test(x.url)) {
      var a = document.createElement('a');
      a.href = x.url;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      a.setAttribute('data-testid', `${prefix}-url`);
      a.textContent = 'View post';
      result.appendChild(a);
    }
  }

  function applyPost(el, post) {
    var before = el.getAttribute('data-status');
    el.setAttribute('data-status', post.status);
    if (el.classList.contains('post')) setStatusClass(el, post.status);
    if (post.status === 'scheduled') el.setAttribute('draggable', 'true');
    else el.removeAttribute('draggable');
    var errors = errorsOf(el, post);
    var badge = el.querySelector('[data-testid="post-status"]');
    if (badge) {
      badge.textContent = STATUS[post.status] || post.status;
      badge.setAttribute('data-status', post.status);
      setStatusClass(badge, post.status);
      if (errors.length) badge.setAttribute('title', errors.join('\n'));
      else badge.removeAttribute('title');
    }
    var details = el.querySelector('[data-testid="post-error"]');
    if (details) {
      var list = details.querySelector('ul');
      list.textContent = '';
      errors.forEach((e) => {
        var li = document.createElement('li');
        li.textContent = e;
        list.appendChild(li);
      });
      details.hidden = errors.length === 0;
    }
    post.channels.forEach((c) => {
      var row = el.querySelector(`[data-pc-channel="${c.channelId}"]`);
      if (row) showOutcome(row, c, 'post-channel-status', 'post-channel');
      var items = el.querySelector(`[data-pc-items="${c.channelId}"]`);
      if (items)
        (c.items || []).forEach((item) => {
          var tr = items.querySelector(`[data-position="${item.position}"]`);
          if (tr) showOutcome(tr, item, 'post-item-status', 'post-item');
        });
    });
    var edit = el.querySelector('[data-testid="post-edit"]');
    if (edit && post.status !== 'scheduled') edit.hidden = true;
    // Delete and Retry on a post's page: each only in the statuses it applies to.
    Array.prototype.forEach.call(el.querySelectorAll('[data-show-when]'), (action) => {
      action.hidden = action.getAttribute('data-show-when').split(' ').indexOf(post.status) < 0;
    });
    if (before && before !== post.status) say(`A post is now ${(STATUS[post.status] || post.status).toLowerCase()}.`);
  }

  function poll(container) {
    var feed = container.getAttribute('data-feed');
    var busy = false;
    function tick() {
      if (busy || document.hidden || container.hasAttribute('data-deleted')) return;
      busy = true;
      fetch(feed, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(window.PP.json)
        .then((body) => {
          var posts = body.data ? body.data : [body];
          var seen = {};
          posts.forEach((post) => {
            seen[post.id] = true;
            var els = container.matches(`[data-post-id="${post.id}"]`)
              ? [container]
              : container.querySelectorAll(`[data-post-id="${post.id}"]`);
            Array.prototype.forEach.call(els, (el) => {
              applyPost(el, post);
            });
          });
          if (body.data) {
            // A post deleted (or moved out of this period) elsewhere leaves the calendar at once;
            // one added elsewhere is announced with a link to reload.
            var shown = {};
            Array.prototype.forEach.call(container.querySelectorAll('li.post[data-post-id]'), (el) => {
              var id = el.getAttribute('data-post-id');
              shown[id] = true;
              if (seen[id]) return;
              el.parentNode.removeChild(el);
              say('A post was removed.');
            });
            var added = posts.some((p) => !shown[p.id]);
            var stale = document.querySelector('[data-testid="calendar-stale"]');
            if (stale && added) stale.hidden = false;
          }
        })
        .catch((err) => {
          // A post's page whose post was deleted elsewhere: say so, and offer no more actions.
          if (err && err.status === 404 && !container.hasAttribute('data-deleted') && container.matches('[data-post-id]')) {
            container.setAttribute('data-deleted', 'true');
            var note = container.querySelector('[data-testid="post-deleted"]');
            if (note) note.hidden = false;
            Array.prototype.forEach.call(container.querySelectorAll('[data-show-when], [data-testid="post-edit"]'), (a) => {
              a.hidden = true;
            });
          }
          /* otherwise try again on the next tick */
        })
        .then(() => {
          busy = false;
        });
    }
    setInterval(tick, POLL_MS);
    document.addEventListener('visibilitychange', tick);
  }

  function formatTime(iso) {
    var tz = document.body.getAttribute('data-tz') || 'UTC';
    try {
      return new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
    } catch (e) {
      return iso.slice(11, 16);
    }
  }

  /** A draft onto a day: among the day's marks (a list made when the day has none), its time as the server set it. */
  function moveDraft(item, day, date) {
    var id = item.getAttribute('data-draft-id');
    var tz = document.body.getAttribute('data-tz') || 'UTC';
    say(`Moving the draft to ${date}…`);
    window.PP.send('PATCH', `/web/api/drafts/${encodeURIComponent(id)}?tz=${encodeURIComponent(tz)}`, { date: date }).then(
      (draft) => {
        var marks = day.querySelector('ul.marks');
        if (!marks) {
          marks = document.createElement('ul');
          marks.className = 'marks';
          marks.setAttribute('data-testid', 'calendar-marks');
          day.appendChild(marks);
        }
        marks.appendChild(item);
        item.setAttribute('data-intended-at', draft.intendedAt);
        var time = item.querySelector('time');
        if (time) {
          time.setAttribute('datetime', draft.intendedAt);
          time.textContent = formatTime(draft.intendedAt);
          time.hidden = false;
        }
        var tray = document.querySelector('[data-testid="calendar-unplaced-drafts"]');
        if (tray && !tray.querySelector('li.draft-mark')) tray.hidden = true;
        say(`Draft moved to ${date}.`);
      },
      (err) => {
        say(`The draft was not moved: ${err.message}`);
        window.alert(`The draft was not moved: ${err.message}`);
      },
    );
  }

  function dragAndDrop(calendar) {
    var dragged = null;
    calendar.addEventListener('dragstart', (event) => {
      var item = event.target.closest?.('li.post[draggable="true"], li.draft-mark[draggable="true"]');
      if (!item) return;
      dragged = item;
      event.dataTransfer.effectAllowed = 'move';
      event.dataTransfer.setData('text/plain', item.getAttribute('data-post-id') || item.getAttribute('data-draft-id'));
      item.classList.add('dragging');
    });
    calendar.addEventListener('dragend', () => {
      if (dragged) dragged.classList.remove('dragging');
      dragged = null;
      Array.prototype.forEach.call(calendar.querySelectorAll('.drop-target'), (d) => {
        d.classList.remove('drop-target');
      });
    });
    calendar.addEventListener('dragover', (event) => {
      var day = event.target.closest?.('[data-date]');
      if (!day || !dragged) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      Array.prototype.forEach.call(calendar.querySelectorAll('.drop-target'), (d) => {
        if (d !== day) d.classList.remove('drop-target');
      });
      day.classList.add('drop-target');
    });
    calendar.addEventListener('drop', (event) => {
      var day = event.target.closest?.('[data-date]');
      var item = dragged;
      if (!day || !item) return;
      event.preventDefault();
      day.classList.remove('drop-target');
      var from = item.closest('[data-date]');
      if (from === day) return;
      var date = day.getAttribute('data-date');
      if (item.hasAttribute('data-draft-id')) {
        moveDraft(item, day, date);
        return;
      }
      var id = item.getAttribute('data-post-id');
      say(`Moving the post to ${date}…`);
      var tz = document.body.getAttribute('data-tz') || 'UTC';
      window.PP.send('PATCH', `/web/api/posts/${encodeURIComponent(id)}?tz=${encodeURIComponent(tz)}`, { date: date }).then(
        (post) => {
          day.querySelector('.post-list').appendChild(item);
          item.setAttribute('data-scheduled-at', post.scheduledAt);
          var time = item.querySelector('time');
          if (time) {
            time.setAttribute('datetime', post.scheduledAt);
            time.textContent = formatTime(post.scheduledAt);
          }
          applyPost(item, post);
          say(`Post moved to ${date}.`);
        },
        (err) => {
          say(`The post was not moved: ${err.message}`);
          window.alert(`The post was not moved: ${err.message}`);
        },
      );
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    Array.prototype.forEach.call(document.querySelectorAll('[data-live-posts]'), poll);
    var calendar = document.querySelector('[data-testid="calendar"]');
    if (calendar) dragAndDrop(calendar);
  });
})();
