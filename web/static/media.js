// The media library's upload form: the three steps from the browser, then the grid is reloaded.
(() => {
  'use strict';
  document.addEventListener('DOMContentLoaded', () => {
    var form = document.querySelector('[data-upload-form]');
    if (!form) return;
    var status = form.querySelector('[data-testid="media-upload-status"]');
    var say = (text) => {
      status.textContent = text;
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      var input = form.querySelector('input[type="file"]');
      var file = input.files?.[0];
      if (!file) {
        say('Choose a file first.');
        input.focus();
        return;
      }
      var button = form.querySelector('button[type="submit"]');
      button.disabled = true;
      window.PP.upload(file, form.querySelector('[name="altText"]').value.trim(), say).then(
        () => {
          say(`${file.name} uploaded. Updating the library…`);
          location.reload();
        },
        (err) => {
          say(`Upload failed: ${err.message}`);
          button.disabled = false;
        },
      );
    });
  });
})();
