"""Headless Debian Chromium (Playwright) through an adaptive study (issue 26): the first-round
tranche, the top-up tranche the background refresher adds, and the admin view's picture
(inline SVG, no script, nothing the Content-Security-Policy refuses)."""

from pathlib import Path

import pytest
from sqlalchemy import select
from test_annotate_adaptive import adaptive_protocol
from test_annotate_app import refresh_figures, usf_pair_file
from test_annotate_browser import (
    ARGS,
    CHROMIUM,
    Site,
    rate_slider_page,
    start,
    submit_and_wait,
)

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]

RIGHT = ("difficulty", "ship", "toast", "chilly", "purchase")


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS,
                                             headless=True)
        yield browser
        browser.close()


def walk(page, code: str, shift: int = 0) -> dict:
    """Answer every page of a tranche (checkpoints right, sliders by keyboard; ``shift`` makes
    raters disagree on some pairs, so their split-half reliability stays below 1); returns
    {item id: value}."""
    clicked = {}
    while not page.locator("#message").count():
        if page.locator("input[name=choice]").count():
            labels = page.locator("label").all_inner_texts()
            right = next(i for i, t in enumerate(labels) if any(w in t for w in RIGHT))
            page.locator("input[name=choice]").nth(right).check()
            submit_and_wait(page)
            continue
        clicked.update(rate_slider_page(page, lambda item, k: ((item + k + shift * (item % 3)) % 7,
                                                           "keyboard"),
                                        code))
    assert page.inner_text("#code") == code
    return clicked


def tranche_items(site, number: int) -> set[int]:
    with site.app.extensions["lexgold"].sessions() as session:
        return set(session.scalars(select(m.Item.id).join(
            m.Tranche, m.Item.tranche_id == m.Tranche.id).where(m.Tranche.number == number)))


def test_adaptive_study_with_a_top_up_tranche(browser, tmp_path: Path, usf):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv",
                          counts=(("N", "N", 34), ("V", "V", 10), ("A", "AJ", 8)))
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 1}, first_round_raters=2,
                                 topup_pairs=12, topup_raters=1, target_reliability=1.0,
                                 budget_ratings=100000)
    url = database_url(tmp_path / "adaptive.sqlite")
    create_study(protocol, pairs, url, completion_code="ADAPT-DONE")
    site = Site(url)
    try:
        first = {}
        for k in (1, 2):                              # the first round: two raters
            page = browser.new_page()
            start(page, site.base + f"?PROLIFIC_PID=first{k}&STUDY_ID=s1&SESSION_ID=x{k}")
            first.update(walk(page, "ADAPT-DONE", shift=k))
            page.close()
        assert set(first) == tranche_items(site, 1)
        # nothing in a rater's request added a tranche: the refresher does it
        assert tranche_items(site, 2) == set()
        assert refresh_figures(site.app)["added"] == {2: 1}
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=topup1&STUDY_ID=s1&SESSION_ID=x9")
        topped = walk(page, "ADAPT-DONE")
        page.close()
        assert set(topped) == tranche_items(site, 2) and len(topped) >= 12 + 20
        ratings, _ = site.stored()
        assert {i: ratings[i] for i in topped} == topped
        refresh_figures(site.app)
        admin = browser.new_page()
        refused = []
        admin.on("console", lambda message: refused.append(message.text)
                 if "Content Security Policy" in message.text else None)
        admin.goto(site.base + "admin/login")
        admin.fill("input[name=password]", "s3cret")
        submit_and_wait(admin)
        picture = admin.locator("#adaptive-picture")
        expect(picture).to_be_visible()
        assert "top-up 2" in picture.inner_html() and "1/1" in picture.inner_html()
        expect(admin.locator("#adaptive-summary")).to_contain_text("ratings spent")
        assert refused == []
        admin.close()
    finally:
        site.close()
