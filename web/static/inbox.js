// The Inbox, live: every 3 s while the tab is visible (as calendar.js follows the posts) the rows
// of the page's filters are fetched again (GET /inbox/live, HTML the server escaped) and applied in
// place: each row's status, assignee, hide and replies change, new comments appear where the list
// puts them (unread first, newest first), a part holding the focus is left alone and what is
// typed in a reply stays. Each reply's character count follows its textarea (graphemes, or X's
// and Mastodon's weighted counts from POST /web/api/text-lengths); a form is sent once.
(() => {
  'use strict';
  var POLL_MS = 3000;
  var graphemes = window.PP.graphemes;

  function say(text) {
    var region = document.getElementById('inbox-message');
    if (region) region.textContent = text;
  }

  function showCount(li, n) {
    var label = (li.querySelector('output').getAttribute('aria-label') || '').replace(/: \d+ of \d+ characters.*$/, '');
    window.PP.showCount(li, n, label);
  }

  // Weighted counts: asked a moment after typing stops; only the latest answer per field is shown.
  var timers = {};
  var asked = {};
  function count(area) {
    var li = document.querySelector(`li[data-count-source="${area.id}"]`);
    if (!li) return;
    if (li.getAttribute('data-count-rule') !== 'server') {
      showCount(li, graphemes(area.value));
      return;
    }
    li.setAttribute('data-pending', 'true');
    clearTimeout(timers[area.id]);
    timers[area.id] = setTimeout(() => {
      var seq = (asked[area.id] = (asked[area.id] || 0) + 1);
      window.PP.send('POST', '/web/api/text-lengths', {
        texts: [{ channelId: li.getAttribute('data-channel-id'), text: area.value }],
      }).then(
        (body) => {
          if (seq !== asked[area.id]) return;
          showCount(li, body.counts[0].length);
          li.removeAttribute('data-pending');
        },
        () => {
          if (seq === asked[area.id]) li.removeAttribute('data-pending');
        },
      );
    }, 150);
  }

  /** A row's parts from the fresh copy, but not one the person is using. */
  function update(row, fresh) {
    ['data-status', 'data-assignee', 'class'].forEach((name) => {
      row.setAttribute(name, fresh.getAttribute(name) || '');
    });
    Array.prototype.forEach.call(fresh.querySelectorAll('[data-live-part]'), (part) => {
      var old = row.querySelector(`[data-live-part="${part.getAttribute('data-live-part')}"]`);
      if (old && !old.contains(document.activeElement)) old.replaceWith(part);
    });
  }

  function apply(list, fresh) {
    var shown = {};
    Array.prototype.forEach.call(list.children, (row) => {
      shown[row.getAttribute('data-comment-id')] = row;
    });
    var added = 0;
    var previous = null;
    Array.prototype.slice.call(fresh.children).forEach((row) => {
      var id = row.getAttribute('data-comment-id');
      var current = shown[id];
      if (current) {
        update(current, row);
        previous = current;
        return;
      }
      // A new comment goes right after the row the fresh list has before it.
      list.insertBefore(row, previous ? previous.nextSibling : list.firstChild);
      previous = row;
      added++;
    });
    var empty = document.querySelector('[data-testid="inbox-empty"]');
    if (empty) empty.hidden = list.children.length > 0;
    if (added) say(added === 1 ? 'A new comment.' : `${added} new comments.`);
  }

  function poll(section) {
    var list = section.querySelector('[data-testid="inbox-list"]');
    var feed = section.getAttribute('data-feed');
    var busy = false;
    function tick() {
      if (busy || document.hidden) return;
      busy = true;
      fetch(feed, { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then((res) => (res.ok ? res.text() : null))
        .then((text) => {
          if (!text) return;
          // Signed out meanwhile: the answer is the sign-in page, which holds no rows.
          var fresh = new DOMParser().parseFromString(text, 'text/html').querySelector('[data-inbox-fragment]');
          if (fresh) apply(list, fresh);
        })
        .catch(() => {
          /* try again on the next tick */
        })
        .then(() => {
          busy = false;
        });
    }
    setInterval(tick, POLL_MS);
    document.addEventListener('visibilitychange', tick);
  }

  document.addEventListener('DOMContentLoaded', () => {
    var section = document.querySelector('[data-inbox]');
    if (!section) return;
    section.addEventListener('input', (event) => {
      if (event.target.matches('textarea[name="content"]')) count(event.target);
    });
    // One reply per click however often it is pressed: a second submit of a form waits for the page.
    section.addEventListener('submit', (event) => {
      var form = event.target;
      if (form.hasAttribute('data-sending')) event.preventDefault();
      else form.setAttribute('data-sending', 'true');
    });
    // A reply the browser kept (back to the page) is counted as it stands.
    Array.prototype.forEach.call(section.querySelectorAll('textarea[name="content"]'), (area) => {
      if (area.value) count(area);
    });
    poll(section);
  });
})();
