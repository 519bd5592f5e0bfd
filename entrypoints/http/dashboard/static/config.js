// callwright dashboard, configuration pages (numbers, templates, flows): rows added from a
// <template> by app.js carry htmx attributes (the SMS preview button), which htmx must process.
(function () {
  "use strict";
  document.addEventListener("click", (event) => {
    const adder = event.target.closest("[data-add-row]");
    if (!adder || !window.htmx) return;
    const rows = document.getElementById(adder.dataset.rows);
    if (rows) window.htmx.process(rows);
  });
})();
