"""Best-Worst Scaling pages in headless Debian Chromium (Playwright), served by waitress:
a full tranche on a desktop and a phone, left to right and right to left, with axe-core; the
same pair as most and least refused before sending; the keyboard alone; the stored answers
are the clicked ones."""

import pytest
from sqlalchemy import select
from test_annotate_app import protocol_variant, usf_pair_file
from test_annotate_browser import (  # noqa: F401
    CHROMIUM,
    Site,
    assert_accessible,
    browser,
    expect,
    press_and_wait,
    start,
    submit_and_wait,
    tab_to,
)

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
#: the right (most, least) pairs of simlex999_bws.toml's check tuples, by a word of each
CHECKS = {"automobile": (0, 3), "glad": (1, 2)}


def bws_site(tmp_path, usf, **values):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv",
                          counts=(("N", "N", 12), ("V", "V", 4), ("A", "AJ", 4)))
    protocol = protocol_variant(tmp_path, "simlex999_bws", **{
        "raters_per_tranche": 2, "tuples_per_tranche": 40, "tuples_per_page": 3,
        "min_seconds_per_tuple": "0.0", **values})     # 3 a page: pages with 1-3 tuples
    url = database_url(tmp_path / "bws.sqlite")
    create_study(protocol, pairs, url, completion_code="BWS-DONE")
    return Site(url)


def stored(site):
    """{(tuple id, row): rating} of the stored tuple answers and the check answers."""
    with site.app.extensions["lexgold"].sessions() as session:
        rows = session.execute(select(m.Item.tuple_id, m.Item.position, m.Answer.rating)
                               .join(m.Item, m.Answer.item_id == m.Item.id)).all()
        checks = session.execute(select(m.CheckpointAnswer.choice, m.CheckpointAnswer.worst,
                                        m.CheckpointAnswer.correct)).all()
    return {(str(t), p % 4): r for t, p, r in rows}, checks


def answer_page(page, clicked, *, check_same_pair=False):
    """Choose a most and a least pair in every tuple of the page (check tuples right) by
    clicking their labels; records {(tuple key, row): rating}."""
    tuples = page.locator(".tuple")
    for k in range(tuples.count()):
        box = tuples.nth(k)
        key = box.get_attribute("data-tuple")
        best_labels = box.locator("fieldset.side-b label")
        worst_labels = box.locator("fieldset.side-w label")
        assert best_labels.count() == worst_labels.count() == 4
        if key == "c":
            text = box.inner_text()
            best, worst = next(v for w, v in CHECKS.items() if w in text)
            values = [int(v) for v in box.locator("input[name=bc]").evaluate_all(
                "els => els.map(e => e.value)")]
            best_labels.nth(values.index(best)).click()
            worst_labels.nth(values.index(worst)).click()
            continue
        best, worst = k % 4, (k + 2) % 4
        best_labels.nth(best).click()
        if check_same_pair and k == 0:           # the same pair as both: said, not sent
            worst_labels.nth(best).click()
            expect(box.locator(".same-pair")).to_be_visible()
            assert not page.evaluate("document.querySelector('form.bws').checkValidity()")
            page.click("button[type=submit]")
            expect(box.locator(".same-pair")).to_be_visible()    # still here: not sent
        worst_labels.nth(worst).click()
        expect(box.locator(".same-pair")).to_be_hidden()
        for row in range(4):
            clicked[(key, row)] = int(row == best) - int(row == worst)
    submit_and_wait(page)


@pytest.mark.parametrize("device", ["desktop", "phone"])
@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_bws_tranche_in_chromium(browser, tmp_path, usf, device, direction):  # noqa: F811
    site = bws_site(tmp_path, usf, direction=f'"{direction}"')
    try:
        context = browser.new_context(**(PHONE if device == "phone" else {}))
        page = context.new_page()
        start(page, site.base + f"?PROLIFIC_PID=w{device}{direction}&STUDY_ID=s&SESSION_ID=x")
        assert page.get_attribute("html", "dir") == direction
        clicked, pages, first = {}, 0, True
        while not page.locator("#message").count():
            assert page.locator(".tuple").count() >= 1
            assert "Which pair is most similar?" in page.inner_text("main")
            assert "Which pair is least similar?" in page.inner_text("main")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= page.viewport_size["width"]            # no sideways scrolling
            box = page.locator(".tuple").first
            most = box.locator("fieldset.side-b").bounding_box()
            least = box.locator("fieldset.side-w").bounding_box()
            if device == "phone":                                   # stacked
                assert least["y"] >= most["y"] + most["height"] - 1
            elif direction == "rtl":                                # side by side, mirrored
                assert least["x"] + least["width"] <= most["x"] + 1
            else:
                assert most["x"] + most["width"] <= least["x"] + 1
            if first and box.get_attribute("data-tuple") != "c":
                assert_accessible(page, f"BWS page {device} {direction}")
                box.locator("fieldset.side-b label").first.click()
                box.locator("fieldset.side-w label").first.click()
                assert_accessible(page, f"BWS page with the same-pair hint {device} {direction}")
                page.reload()
                first = False
                continue
            if box.get_attribute("data-tuple") == "c":
                assert_accessible(page, f"check tuple {device} {direction}")
            answer_page(page, clicked, check_same_pair=pages == 1)
            pages += 1
        assert page.inner_text("#code") == "BWS-DONE"
        assert_accessible(page, f"completion {device} {direction}")
        rows, checks = stored(site)
        assert rows == clicked
        assert len(checks) == 2 and all(correct for _, _, correct in checks)
        context.close()
    finally:
        site.close()


def test_bws_page_with_the_keyboard_only(browser, tmp_path, usf):  # noqa: F811
    """Tab into a tuple's most group, arrows choose a pair, Tab to the least group, arrows
    again; Enter sends. The stored answer is the keyed one."""
    site = bws_site(tmp_path, usf)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=keys&STUDY_ID=s&SESSION_ID=x")
        while page.locator(".tuple[data-tuple=c]").count():
            answer_page(page, {})
        keyed = {}
        tuples = page.locator(".tuple")
        for k in range(tuples.count()):
            key = tuples.nth(k).get_attribute("data-tuple")
            tab_to(page, f"input[name=b{key}]")
            page.keyboard.press("ArrowDown")                 # row 1 is the most
            tab_to(page, f"input[name=w{key}]")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")                 # row 2 is the least
            assert page.locator(f"input[name=b{key}]:checked").get_attribute("value") == "1"
            assert page.locator(f"input[name=w{key}]:checked").get_attribute("value") == "2"
            keyed.update({(key, r): int(r == 1) - int(r == 2) for r in range(4)})
        tab_to(page, "button[type=submit]")
        press_and_wait(page, "Enter")
        rows, _ = stored(site)
        assert rows == keyed
    finally:
        site.close()


# -- seconds per page in Chromium (no test: printed by running this file) --------------------

def walk_seconds(browser, folder, usf, pages: int = 6) -> dict:  # noqa: F811
    """Seconds per page of a scripted walk in Chromium: BWS pages (5 tuples, two clicks each)
    and SimLex slider groups (7 pairs, one click each), from a page being shown to the next
    page loaded after sending it. The script does not read: these are the site's and the
    browser's seconds (rendering, requests, storing), not a person's (see docs/process.md)."""
    import time

    from test_annotate_browser import set_slider, simlex_site

    out = {}
    for kind in ("bws", "slider"):
        folder.joinpath(kind).mkdir()
        site = (bws_site(folder / kind, usf, tuples_per_page=5) if kind == "bws"
                else simlex_site(folder / kind, usf))
        try:
            page = browser.new_page()
            start(page, site.base + f"?PROLIFIC_PID=time{kind}&STUDY_ID=s&SESSION_ID=x")
            times, units = [], []
            while len(times) < pages and not page.locator("#message").count():
                began = time.perf_counter()
                if page.locator(".tuple[data-tuple=c]").count() or \
                        page.locator("input[name=choice]").count():
                    page.locator("input[type=radio]").first.check() if kind == "slider" \
                        else answer_page(page, {})
                    if kind == "slider":
                        submit_and_wait(page)
                    continue
                if kind == "bws":
                    units.append(page.locator(".tuple").count())
                    answer_page(page, {})
                else:
                    sliders = page.locator("input[type=range]")
                    units.append(sliders.count())
                    for k in range(sliders.count()):
                        set_slider(page, sliders.nth(k), (k * 3) % 7, "click")
                    submit_and_wait(page, "#submit")
                times.append(time.perf_counter() - began)
            out[kind] = {"pages": len(times), "seconds_per_page": sum(times) / len(times),
                         "items_per_page": sum(units) / len(units),
                         "seconds_per_item": sum(times) / sum(units)}
        finally:
            site.close()
    return out


if __name__ == "__main__":                     # python tests/test_annotate_bws_browser.py
    import json
    import sys
    import tempfile
    from pathlib import Path

    from playwright.sync_api import sync_playwright
    from test_annotate_browser import ARGS

    from lexgold.resources import read_usf

    pages = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        print(json.dumps(walk_seconds(chromium, Path(folder), read_usf(), pages), indent=2))
        chromium.close()
