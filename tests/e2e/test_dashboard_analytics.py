"""The dashboard's analytics page (issue 21 item 6) in headless Chromium against a real ``callwright
serve``: the five reports of ``/v1/analytics`` drawn as SVG charts whose bars and points carry the
API's own figures, ``compare=prior`` adding the prior period and its legend, the CSV download
holding the API's rows, an empty period said in words, and the API's refusal of a bad range shown
on the page with the form keeping its values."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import PHONE, log_in, new_account, shot
from tests.e2e.service import ServeProcess, offline_server
from tests.support.call_requests import call_body

pytestmark = pytest.mark.e2e

AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
# Five answered calls and four that fail: no_answer twice, fax_detected and machine_detected once.
EARLIER = ("human", "no_answer", "human")
LATER = ("human", "human", "human", "no_answer", "fax", "machine_end_beep")


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-dash-analytics-", rate_limit_tiers='{"standard": 1000000}') as started:
        yield started


def api(server: ServeProcess, account: dict[str, Any]) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, trust_env=False, timeout=30.0,
                        headers={"Authorization": f"Bearer {account['secret']}"})


def make_calls(http: httpx.Client, answers: tuple[str, ...]) -> None:
    ids = []
    for answered_by in answers:
        body = call_body()
        body["simulation"] = {**body["simulation"], "at": AT, "answered_by": answered_by}
        created = http.post("/v1/calls", json=body)
        assert created.status_code == 201, created.text
        ids.append(created.json()["call_id"])
    deadline = time.monotonic() + 60
    for call_id in ids:
        while http.get(f"/v1/calls/{call_id}").json()["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, f"{call_id} did not finish"
            time.sleep(0.1)


def instant(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _outside_midnight() -> None:
    """The compared window is ``middle`` and the 5 minutes after it, its prior period the 5 before:
    made in the minutes around 00:00 UTC, the prior period would hold two days, whose buckets the
    charts lay beside the current period's by position. Wait that moment out (a few minutes, once
    in a few hundred runs) rather than assert on a split the test did not mean to make."""
    now = datetime.now(timezone.utc)
    since_midnight = now - now.replace(hour=0, minute=0, second=0, microsecond=0)
    if since_midnight < timedelta(minutes=6):
        time.sleep((timedelta(minutes=6) - since_midnight).total_seconds())
    elif since_midnight > timedelta(hours=23, minutes=59):
        time.sleep((timedelta(hours=24, minutes=6) - since_midnight).total_seconds())


@pytest.fixture(scope="module")
def account(server: ServeProcess) -> dict[str, Any]:
    """An approved account whose simulated calls have all finished (set-up through the API): the
    EARLIER ones, then ``middle`` (an instant), then the LATER ones."""
    _outside_midnight()
    made = new_account(server, "analytics")
    with api(server, made) as http:
        make_calls(http, EARLIER)
        time.sleep(1.5)
        made["middle"] = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
        time.sleep(2.5)
        make_calls(http, LATER)
    return made


@pytest.fixture
def page(browser: Browser, server: ServeProcess, account: dict[str, Any]) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    opened = context.new_page()
    log_in(opened, server, account)
    yield opened
    context.close()


def report(server: ServeProcess, account: dict[str, Any], name: str, **params: str) -> dict[str, Any]:
    with api(server, account) as http:
        answered = http.get(f"/v1/analytics/{name}", params=params)
    assert answered.status_code == 200, answered.text
    return answered.json()  # type: ignore[no-any-return]


def titles(page: Page, chart: str, kind: str = "bar") -> list[str]:
    return page.locator(f"svg#{chart} g.{kind} > title").all_text_contents()


def open_reports(page: Page, server: ServeProcess, query: str = "") -> None:
    page.goto(f"{server.base_url}/app/analytics{query}")
    expect(page.get_by_role("heading", name="Analytics", level=1)).to_be_visible()


def test_each_of_the_five_charts_shows_the_apis_figures(page: Page, server: ServeProcess, account: dict[str, Any]):
    open_reports(page, server)
    for chart in ("volume-by-status", "latency-percentiles", "cost-breakdown", "top-failures", "outcome-quality"):
        svg = page.locator(f"svg#chart-{chart}")
        expect(svg).to_have_attribute("role", "img")
        title, desc = svg.locator("> title"), svg.locator("> desc")
        assert title.text_content() and desc.text_content()
        assert svg.get_attribute("aria-labelledby") == f"{title.get_attribute('id')} {desc.get_attribute('id')}"
        expect(page.locator(f"#report-{chart}").get_by_role("link", name="Download CSV")).to_be_visible()

    volume = report(server, account, "volume-by-status")
    busiest = max(volume["data"], key=lambda row: row["calls"])
    day = busiest["bucket"][:10]
    points = titles(page, "chart-volume-by-status")
    assert f"{day}, {busiest['status']}, this period: {busiest['calls']} calls" in points
    assert len(points) == len(volume["data"])  # a column segment per bucket and status
    assert busiest["calls"] == 5

    latency = report(server, account, "latency-percentiles")["data"][0]
    assert f"p50 call duration, this period: {latency['duration_seconds_p50']} s" in titles(
        page, "chart-latency-percentiles")
    cost = report(server, account, "cost-breakdown")["data"][0]
    assert f"Total cost, this period: ${cost['cost_total']}" in titles(page, "chart-cost-breakdown")
    failures = report(server, account, "top-failures")["data"]
    assert {row["error_code"] for row in failures} == {"no_answer", "fax_detected", "machine_detected"}
    shown = titles(page, "chart-top-failures")
    for row in failures:
        failed = f"{row['failures']} failure{'' if row['failures'] == 1 else 's'}"
        assert f"{row['error_code']}, this period: {failed} of {row['calls']} calls ({row['share_pct']}%)" in shown
    quality = report(server, account, "outcome-quality")["data"][0]
    assert f"Confidence 0.9–1.0, this period: {quality['confidence_histogram'][9]} calls" in titles(
        page, "chart-outcome-quality")
    assert quality["confidence_histogram"][9] == 5
    panel = page.locator("#report-outcome-quality")
    expect(panel.locator("dl")).to_contain_text(f"{quality['completion_pct']}%")

    table = page.locator("#report-top-failures details")
    table.locator("summary").click()
    expect(table.get_by_role("row", name="no_answer")).to_contain_text("22.22%")
    shot(page, "analytics")

    page.set_viewport_size(PHONE)
    open_reports(page, server)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    expect(page.locator("svg#chart-top-failures")).to_be_visible()
    shot(page, "analytics-375")


def test_compare_prior_adds_the_prior_series_and_its_legend(page: Page, server: ServeProcess,
                                                             account: dict[str, Any]):
    open_reports(page, server)
    assert page.locator("ul.chart-legend").count() == 1  # only the volume's two statuses, no prior period
    page.get_by_label("Compare with the prior period").check()
    page.get_by_role("button", name="Show reports").click()
    page.wait_for_url("**compare=prior**")
    expect(page.locator("#analytics-window")).to_contain_text("compared with the prior period from")
    expect(page.locator("#report-top-failures ul.chart-legend")).to_contain_text("Prior period (hatched)")

    # A window holding the LATER calls, its prior period the EARLIER ones.
    middle = account["middle"]
    window = {"start": instant(middle), "end": instant(middle + timedelta(minutes=5))}
    open_reports(page, server, f"?{urlencode(window)}&compare=prior")
    expect(page.get_by_label("Compare with the prior period")).to_be_checked()
    expect(page.get_by_label("From (UTC date)")).to_have_value(window["start"])
    compared = report(server, account, "top-failures", **window, compare="prior")
    assert {row["error_code"]: row["failures"] for row in compared["prior"]["data"]}["no_answer"] == 1
    failures = page.locator("#report-top-failures")
    expect(failures.locator("ul.chart-legend")).to_contain_text("Prior period (hatched)")
    expect(failures.locator("ul.chart-legend")).to_contain_text("This period (solid)")
    prior = {row["error_code"]: row["failures"] for row in compared["prior"]["data"]}
    shown = page.locator("svg#chart-top-failures g.bar.prior > title").all_text_contents()
    assert sorted(shown) == sorted(f"{code}, prior period: {count} failure{'' if count == 1 else 's'}"
                                   for code, count in prior.items())
    assert page.locator("svg#chart-top-failures g.bar.prior rect").first.get_attribute("fill") == \
        "url(#chart-top-failures-hatch-0)"

    volume = page.locator("#report-volume-by-status ul.chart-legend")
    expect(volume).to_contain_text("Completed, prior period (hatched)")
    expect(volume).to_contain_text("Failed, prior period (hatched)")
    previous = report(server, account, "volume-by-status", **window, compare="prior")["prior"]
    completed = next(row for row in previous["data"] if row["status"] == "completed" and row["calls"])
    assert completed["calls"] == 2
    assert (f"{completed['bucket'][:10]}, completed, prior period: 2 calls"
            in titles(page, "chart-volume-by-status"))
    quality = report(server, account, "outcome-quality", **window, compare="prior")
    histogram = quality["prior"]["data"][0]["confidence_histogram"]
    assert f"Confidence 0.9–1.0, prior period: {histogram[9]} calls" in titles(page, "chart-outcome-quality")
    for chart in ("latency-percentiles", "cost-breakdown", "outcome-quality"):
        expect(page.locator(f"#report-{chart} ul.chart-legend")).to_contain_text("Prior period")
    table = page.locator("#report-outcome-quality details")
    table.locator("summary").click()
    expect(table.get_by_role("columnheader", name="Value, prior period")).to_be_visible()
    delta = quality["delta_pct"]["data"][0]["completion_pct"]
    expect(table.get_by_role("row", name="Completion rate")).to_contain_text(
        f"+{delta}%" if delta > 0 else f"−{abs(delta)}%")
    shot(page, "analytics-compare")


def test_the_csv_download_has_the_apis_rows(page: Page, server: ServeProcess, account: dict[str, Any]):
    today = datetime.now(timezone.utc).date()
    start, end = (today - timedelta(days=2)).isoformat(), today.isoformat()
    open_reports(page, server)
    page.get_by_label("From (UTC date)").fill(start)
    page.get_by_label("To (UTC date, included)").fill(end)
    page.get_by_role("button", name="Show reports").click()
    page.wait_for_url(f"**start={start}**")
    params = {"start": f"{start}T00:00:00Z", "end": f"{today + timedelta(days=1)}T00:00:00Z"}
    with api(server, account) as http:
        expected = {name: http.get(f"/v1/analytics/{name}.csv", params=params).text
                    for name in ("volume-by-status", "top-failures")}
    for name in ("volume-by-status", "top-failures"):
        with page.expect_download() as started:
            page.locator(f"#report-{name}").get_by_role("link", name="Download CSV").click()
        download = started.value
        assert download.suggested_filename == f"{name}.csv"
        with open(download.path(), encoding="utf-8", newline="") as saved:
            assert saved.read() == expected[name]
    assert expected["top-failures"].splitlines()[0] == "error_code,failures,calls,share_pct"
    assert "no_answer,2,9,22.22" in expected["top-failures"]
    assert len(expected["volume-by-status"].splitlines()) == 1 + 3 * 2  # three days, two statuses


def test_an_empty_period_says_so_instead_of_an_empty_chart(page: Page, server: ServeProcess):
    later = (date.today() + timedelta(days=30)).isoformat()
    open_reports(page, server, f"?start={later}&end={later}")
    expect(page.locator(".empty-period")).to_have_count(5)
    expect(page.locator(".empty-period").first).to_have_text("No calls in this period")
    assert page.locator("svg.chart").count() == 0


def test_a_bad_range_shows_the_apis_words_and_keeps_the_form(page: Page, server: ServeProcess,
                                                              account: dict[str, Any]):
    with api(server, account) as http:
        refused = http.get("/v1/analytics/volume-by-status",
                           params={"start": "2026-11-20T00:00:00Z", "end": "2026-11-11T00:00:00Z"})
    assert refused.status_code == 422
    message = refused.json()["detail"][0]["msg"]
    assert message == "start must be before end"
    open_reports(page, server)
    page.get_by_label("From (UTC date)").fill("2026-11-20")
    page.get_by_label("To (UTC date, included)").fill("2026-11-10")
    page.get_by_label("Mode").select_option("simulated")
    page.get_by_role("button", name="Show reports").click()
    expect(page.get_by_role("alert")).to_contain_text(f"start: {message}")
    expect(page.locator("#error-start")).to_have_text(message)
    expect(page.get_by_label("From (UTC date)")).to_have_value("2026-11-20")
    expect(page.get_by_label("To (UTC date, included)")).to_have_value("2026-11-10")
    expect(page.get_by_label("Mode")).to_have_value("simulated")
    assert page.locator("svg.chart").count() == 0
    shot(page, "analytics-refused")
