// The console's only script (served from /console/assets; the CSP allows no inline script).
// - A form with data-confirm asks the browser for a confirmation before it is sent.
// - A select with data-autosubmit sends its form when changed.
// - A page whose body has data-refresh-seconds reloads itself that often, unless the
//   operator is typing in one of its forms or a form is on its way.
'use strict';

let leaving = false;

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
  else leaving = true;
});

document.addEventListener('change', (event) => {
  const field = event.target;
  if (field instanceof HTMLSelectElement && field.hasAttribute('data-autosubmit') && field.form) field.form.requestSubmit();
});

const refreshSeconds = Number(document.body.dataset.refreshSeconds);
if (refreshSeconds > 0) {
  let edited = false;
  document.addEventListener('input', () => {
    edited = true;
  });
  const busy = () => {
    const active = document.activeElement;
    return leaving || edited || active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement;
  };
  const tick = () => {
    if (busy()) setTimeout(tick, refreshSeconds * 1000);
    else window.location.reload();
  };
  setTimeout(tick, refreshSeconds * 1000);
}
