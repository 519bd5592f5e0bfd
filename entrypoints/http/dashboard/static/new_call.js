// New call and batch forms: each outcome-schema row's "Optional" checkbox carries its row's number
// as its value (checkboxes of repeated rows are only sent when ticked, so the number says which row),
// kept right after a row is added or removed. Runs before app.js restores a draft (deferred scripts
// run before DOMContentLoaded), adding the rows the draft needs so each checkbox finds its number.
(function () {
  "use strict";
  const DRAFT = "callwright.draft:";

  function renumber(form) {
    form.querySelectorAll("[data-row]").forEach((row, index) => {
      const box = row.querySelector('input[name="field_optional"]');
      if (box) box.value = String(index);
    });
  }

  function addRows(form) {
    const saved = sessionStorage.getItem(DRAFT + location.pathname + "#" + form.dataset.draft);
    if (!saved) return;
    let wanted = 0;
    try { wanted = JSON.parse(saved).filter(([name]) => name === form.dataset.rowField).length; } catch (e) { return; }
    const adder = form.querySelector("[data-add-row]");
    const template = adder && document.getElementById(adder.dataset.addRow);
    const rows = adder && document.getElementById(adder.dataset.rows);
    if (!template || !rows) return;
    while (form.querySelectorAll("[data-row]").length < wanted) rows.appendChild(template.content.cloneNode(true));
  }

  function forms() { return document.querySelectorAll("form[data-row-field]"); }

  forms().forEach((form) => { addRows(form); renumber(form); });
  // After app.js (its listener was added first) has added or removed a row: number the rows again,
  // and let the draft know (an "input" event makes app.js save it).
  document.addEventListener("click", (event) => {
    if (!event.target.closest("[data-add-row], [data-remove-row]")) return;
    forms().forEach((form) => { renumber(form); form.dispatchEvent(new Event("input", { bubbles: true })); });
  });
})();
