"""The admin dashboard and the shareable preview link in headless Chromium (issue 37): the
charts are drawn (inline SVG with an accessible name), the page passes axe and the
Content-Security-Policy lets everything through (no console error); a preview link opens with
no password, walks consent, instructions, checkpoint, sliders and the completion page, passes
axe on each, and no table of the study gains or loses a row."""

import re

import pytest

from lexgold.study import preview_links
from lexgold.study.clock import database_now
from test_annotate_app import enter, rate_all, refresh_figures
from test_annotate_browser import (Site, assert_accessible, browser,  # noqa: F401 (fixture)
                                   expect, simlex_site, submit_and_wait, to_first_group)
from test_annotate_preview_link import row_counts

pytestmark = [pytest.mark.browser]


def _raters(app, n):
    """``n`` raters complete their tranche (two agree, the others rate at random-looking
    values) through Flask's test client."""
    for k in range(n):
        client = app.test_client()
        enter(client, f"?PROLIFIC_PID=d{k}&STUDY_ID=s&SESSION_ID=x{k}")
        rate_all(client, rating=(lambda i: i % 7) if k % 2 else (lambda i, k=k: (i * k) % 7))


def _errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return errors


def test_dashboard_charts_drawn_accessible_and_under_the_csp(browser, tmp_path, usf):
    site = simlex_site(tmp_path, usf, raters_per_tranche=3)
    try:
        _raters(site.app, 4)
        refresh_figures(site.app)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = _errors(page)
        page.goto(site.base + "admin/login")
        page.fill("input[name=password]", "s3cret")
        submit_and_wait(page)
        expect(page.locator("#bar-places")).to_have_attribute("value", "4")
        assert "4 of 6 places completed (67 %)" in page.inner_text("#dashboard")
        for chart in ("completions", "ratings", "quality", "growth"):
            svg = page.locator(f"svg#chart-{chart}")
            expect(svg).to_be_visible()
            assert svg.get_attribute("role") == "img"
            assert svg.bounding_box()["width"] > 200
        growth = page.locator("svg#chart-growth")
        assert growth.locator("circle").count() >= 2        # agreement at several points
        name = page.evaluate("document.querySelector('#chart-quality-title').textContent")
        assert name == "Rater quality: agreement against time"
        page.locator("summary", has_text="As a table").first.click()
        expect(page.locator("#per-day")).to_be_visible()
        assert_accessible(page, "admin dashboard")
        assert not errors, errors
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.context.add_cookies(page.context.cookies())
        phone.goto(site.base + "admin/")
        assert phone.locator("svg#chart-ratings").bounding_box()["width"] <= 390
    finally:
        site.close()


def test_preview_link_walks_the_study_without_a_password_or_a_write(browser, tmp_path, usf):
    site = simlex_site(tmp_path, usf)
    try:
        with site.app.extensions["lexgold"].sessions() as session:
            link = preview_links.make(session, site.app.secret_key, database_now(session), 2)
        before = row_counts(site.app)
        context = browser.new_context()               # a collaborator: no admin session
        page = context.new_page()
        errors = _errors(page)
        page.goto(f"{site.base}preview/{link.token}")
        assert "Nothing is stored" in page.inner_text("main")
        assert_accessible(page, "preview: consent")
        page.check("input[name=consent]")
        page.check("input[name=native]")
        submit_and_wait(page)
        assert_accessible(page, "preview: instructions")
        while page.locator("input[name=page]").count():
            submit_and_wait(page)
        assert page.locator("input[name=choice]").count()
        assert_accessible(page, "preview: checkpoint")
        to_first_group(page)
        expect(page.locator("fieldset.pair input[type=range]").first).to_be_visible()
        assert "Nothing is stored" in page.inner_text("main")
        assert_accessible(page, "preview: sliders")
        last = re.sub(r"/\d+$", "/999", page.url)
        assert context.request.get(last).status == 404
        number = int(page.url.rsplit("/", 1)[1])
        while "placeholder" not in page.inner_text("main"):   # on to the completion page
            number += 1
            page.goto(re.sub(r"/\d+$", f"/{number}", page.url))
        assert "PREVIEW" in page.inner_text("main") and "SIMLEX-DONE" not in page.content()
        assert_accessible(page, "preview: completion")
        assert not errors, errors
        assert row_counts(site.app) == before
        with site.app.extensions["lexgold"].sessions() as session:
            preview_links.revoke(session, database_now(session))
        page.goto(f"{site.base}preview/{link.token}")
        assert "expired, was revoked" in page.inner_text("main")
    finally:
        site.close()
