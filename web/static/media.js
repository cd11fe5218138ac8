// The media library's upload form: the three steps from the browser, then the grid is reloaded.
(function () {
  'use strict';
  document.addEventListener('DOMContentLoaded', function () {
    var form = document.querySelector('[data-upload-form]');
    if (!form) return;
    var status = form.querySelector('[data-testid="media-upload-status"]');
    var say = function (text) { status.textContent = text; };
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var input = form.querySelector('input[type="file"]');
      var file = input.files && input.files[0];
      if (!file) { say('Choose a file first.'); input.focus(); return; }
      var button = form.querySelector('button[type="submit"]');
      button.disabled = true;
      window.PP.upload(file, form.querySelector('[name="altText"]').value.trim(), say).then(function () {
        say(file.name + ' uploaded. Updating the library…');
        location.reload();
      }, function (err) {
        say('Upload failed: ' + err.message);
        button.disabled = false;
      });
    });
  });
})();
