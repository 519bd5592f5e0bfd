// callwright dashboard: copy buttons, form drafts kept across a re-login, live regions fed by
// server-sent events, countdowns and repeatable form rows. No inline script anywhere (the CSP forbids it).
(function () {
  "use strict";
  const DRAFT = "callwright.draft:";

  function copy(button) {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    source.select();
    const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 2000); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(source.value).then(done, done);
    else { document.execCommand("copy"); done(); }
  }

  // A form marked data-draft keeps what is typed in sessionStorage, so a session that ends while
  // it is filled in loses nothing: after logging in again the page refills it.
  function draftKey(form) { return DRAFT + location.pathname + "#" + form.dataset.draft; }
  function saveDraft(form) {
    const values = [];
    for (const el of form.elements) {
      if (!el.name || el.type === "hidden" || el.type === "password" || el.type === "file") continue;
      values.push([el.name, el.type === "checkbox" || el.type === "radio" ? (el.checked ? el.value : null) : el.value]);
    }
    sessionStorage.setItem(draftKey(form), JSON.stringify(values));
  }
  function restoreDraft(form) {
    const saved = sessionStorage.getItem(draftKey(form));
    if (!saved) return;
    const values = JSON.parse(saved);
    const rows = values.filter(([name]) => name === form.dataset.rowField).length;
    const adder = form.querySelector("[data-add-row]");
    while (adder && form.querySelectorAll("[data-row]").length < rows) addRow(adder);
    const seen = {};
    for (const [name, value] of values) {
      const all = form.querySelectorAll(`[name="${CSS.escape(name)}"]`);
      const index = seen[name] = (seen[name] ?? -1) + 1;
      const el = all.length > 1 && all[0].type !== "radio" && all[0].type !== "checkbox" ? all[index] : null;
      if (el) { el.value = value; continue; }
      for (const candidate of all) {
        if (candidate.type === "checkbox" || candidate.type === "radio") { if (value !== null && candidate.value === value) candidate.checked = true; }
        else if (value !== null) candidate.value = value;
      }
    }
  }

  function addRow(button) {
    const template = document.getElementById(button.dataset.addRow);
    const rows = document.getElementById(button.dataset.rows);
    if (!template || !rows) return;
    rows.appendChild(template.content.cloneNode(true));
    const fresh = rows.lastElementChild;
    const first = fresh && fresh.querySelector("input, select");
    if (first) first.focus();
  }

  // data-live="/app/…/live" on a region: the server sends an event whenever what it shows changed;
  // the region is then fetched again from data-refresh (htmx swaps it in place).
  function live(region) {
    const source = new EventSource(region.dataset.live);
    source.addEventListener("changed", () => {
      htmx.ajax("GET", region.dataset.refresh, { target: region, swap: "innerHTML" });
    });
    source.addEventListener("login", () => { source.close(); location.reload(); });
    window.addEventListener("pagehide", () => source.close());
  }

  function countdown(el) {
    const until = Date.parse(el.dataset.until);
    const tick = () => {
      const left = Math.max(0, Math.round((until - Date.now()) / 1000));
      const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      el.textContent = left ? `${h}h ${String(m).padStart(2, "0")}m ${String(s).padStart(2, "0")}s left` : "ended";
      if (left) setTimeout(tick, 1000);
    };
    tick();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (button) { event.preventDefault(); copy(button); return; }
    const adder = event.target.closest("[data-add-row]");
    if (adder) { event.preventDefault(); addRow(adder); return; }
    const remover = event.target.closest("[data-remove-row]");
    if (remover) { event.preventDefault(); remover.closest("[data-row]").remove(); }
  });

  function init(root) {
    // A page that says a form's work is done (the call was placed) drops its draft before any
    // form on it would be refilled from it.
    root.querySelectorAll("[data-clear-draft]").forEach((el) => {
      sessionStorage.removeItem(DRAFT + el.dataset.clearDraft);
    });
    root.querySelectorAll("form[data-draft]").forEach((form) => {
      restoreDraft(form);
      form.addEventListener("input", () => saveDraft(form));
      form.addEventListener("change", () => saveDraft(form));
    });
    root.querySelectorAll("[data-live]").forEach(live);
    root.querySelectorAll("[data-until]").forEach(countdown);
  }

  document.addEventListener("DOMContentLoaded", () => init(document));
  document.addEventListener("htmx:load", (event) => { if (event.detail.elt !== document.body) init(event.detail.elt); });
})();
