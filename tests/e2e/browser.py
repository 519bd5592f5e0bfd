"""Headless Chromium for the dashboard's end-to-end tests: Debian's ``chromium`` (``make test``
installs it) driven by Playwright's Python API, which brings its own driver and downloads no
browser. Screenshots go to ``tests/e2e/screenshots/`` (git-ignored), one per page a test shows.

A test needing the browser fails (never skips) when ``chromium`` is missing: CI installs it.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from tests.e2e.service import PASSWORD, ServeProcess, approve_with_cli, signup

SCREENSHOTS = Path(__file__).parent / "screenshots"
# Chromium as root in a container, on a machine whose network reaches only loopback and registries.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
PHONE = {"width": 375, "height": 740}
_accounts = itertools.count(1)


def chromium_path() -> str:
    found = os.environ.get("CALLWRIGHT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "Debian's chromium is not installed: `make test` installs it (apt-get install chromium)"
    return found


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def shot(page: Page, name: str) -> Path:
    """A full-page screenshot named after what it shows (``calls-list.png``). Every page a test
    shows is also audited (``AUDIT``: labels, names, headings, contrast): a problem fails the test."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^a-z0-9-]+', '-', name.lower())}.png"
    page.screenshot(path=str(path), full_page=True)
    assert accessibility_problems(page) == [], f"{name}: {page.url}"
    return path


def new_account(server: ServeProcess, prefix: str = "dash", *, approve: bool = True) -> dict[str, Any]:
    """A signed-up account (approved by the operator CLI unless told not to): its e-mail, password
    and the sign-up answer (ids and the initial key's secret, for set-up through the API)."""
    email = f"{prefix}-{next(_accounts)}-{os.getpid()}@example.com"
    with server.client() as http:
        answer = signup(http, email)
    if approve:
        approve_with_cli(server.env, email)
    return {"email": email, "password": PASSWORD, **answer}


def log_in(page: Page, server: ServeProcess, account: dict[str, Any]) -> None:
    page.goto(f"{server.base_url}/app/login")
    page.get_by_label("E-mail").fill(account["email"])
    page.get_by_label("Password").fill(account["password"])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("domcontentloaded")
    refused = page.locator("main:has(form[action='/app/login']) [role=alert]")
    assert not refused.count(), f"the log-in was refused: {refused.all_inner_texts()}"
    page.wait_for_url(re.compile(r"/app/calls(\?[^/]*)?$"), wait_until="domcontentloaded")


# Run in the page: what an accessibility audit would flag first. Every form control has an
# accessible name; every button and link has text; ids are unique; one h1 and no skipped heading
# level; and each visible text's colour against its background reaches WCAG AA (4.5:1, 3:1 for
# large text).
AUDIT = """() => {
  const problems = [];
  const named = (el) => (el.labels && el.labels.length) || el.getAttribute('aria-label') ||
    el.getAttribute('aria-labelledby') || el.getAttribute('title');
  for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (!named(el)) problems.push(`unlabelled ${el.tagName.toLowerCase()} name=${el.name}`);
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (!(el.innerText || el.textContent || '').trim() && !el.getAttribute('aria-label')) problems.push(`empty ${el.tagName.toLowerCase()}`);
  }
  const ids = {};
  for (const el of document.querySelectorAll('[id]')) { ids[el.id] = (ids[el.id] || 0) + 1; }
  for (const [id, n] of Object.entries(ids)) if (n > 1) problems.push(`duplicate id ${id}`);
  const headings = [...document.querySelectorAll('h1, h2, h3, h4')].map((h) => +h.tagName[1]);
  if (headings.filter((h) => h === 1).length !== 1) problems.push(`${headings.filter((h) => h === 1).length} h1`);
  headings.forEach((h, i) => { if (i && h > headings[i - 1] + 1) problems.push(`heading h${headings[i - 1]} then h${h}`); });
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((acc, v, i) => acc + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const c = rgb(getComputedStyle(node).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(el) || el.closest('svg')) continue;
    seen.add(el);
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none' || !el.offsetParent && style.position !== 'fixed') continue;
    const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && +style.fontWeight >= 700);
    if (ratio < (large ? 3 : 4.5)) problems.push(`contrast ${ratio.toFixed(2)} for "${el.textContent.trim().slice(0, 30)}"`);
  }
  return problems;
}"""


def accessibility_problems(page: Page) -> list[str]:
    return list(page.evaluate(AUDIT))
