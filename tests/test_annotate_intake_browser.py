"""Issue 37 in headless Debian Chromium (Playwright, axe-core), served by waitress: pause,
resume and close from the admin view as a new and as a current rater see them; the completion
page's code box, copy button and reopening; the session cookie surviving a browser restart;
and every control of every page type at least 44 x 44 CSS px at 390 x 844 (WCAG 2.5.5) in
SimLex, HyperLex, TR9856 and Best-Worst studies."""

import time

import pytest
from test_annotate_app import protocol_variant, tr9856_pair_file, usf_pair_file
from test_annotate_browser import (  # noqa: F401
    CHROMIUM,
    Site,
    assert_accessible,
    browser,
    expect,
    start,
    submit_and_wait,
    to_first_group,
)

from lexgold.study.db import database_url
from lexgold.study.store import create_study

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
BACK = "https://app.prolific.com/submissions/complete?cc={code}"
OWN = "?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID={session}"

#: every visible control of the page whose target (a radio button's or checkbox's: its label)
#: is under 44 x 44 CSS px: [html, width, height]
SMALL_TARGETS = """() => {
  const small = [];
  for (const el of document.querySelectorAll(
      "main button, main a[href], main input:not([type=hidden]), main select, main textarea")) {
    const style = getComputedStyle(el);
    const own = el.getBoundingClientRect();
    if (own.width === 0 || own.height === 0 || style.visibility === "hidden") continue;
    const target = el.matches("input[type=radio], input[type=checkbox]")
      ? (el.closest("label") || el) : el;
    const box = target.getBoundingClientRect();
    if (box.width < 44 || box.height < 44)
      small.push([el.outerHTML.slice(0, 90), Math.round(box.width), Math.round(box.height)]);
  }
  return small;
}"""


def assert_targets(page, name, seen):
    """Every control of the page is at least 44 x 44 CSS px; records the page type."""
    controls = page.locator("main button:visible, main a[href]:visible, "
                            "main input:not([type=hidden]):visible").count()
    assert controls > 0, name
    assert page.evaluate(SMALL_TARGETS) == [], name
    seen.append(name)


def tr9856_site(tmp_path, usf, **values):
    url = database_url(tmp_path / "t.sqlite")
    create_study("tr9856", tr9856_pair_file(usf, tmp_path / "t.csv"), url,
                 completion_code="TR-DONE-37", completion_url=BACK, **values)
    return Site(url)


def finish_binary(page):
    """Answer every page of a TR9856 tranche ('related' throughout) up to the completion page."""
    while not page.locator("#message").count():
        boxes = page.locator("fieldset.pair")
        for k in range(boxes.count()):
            boxes.nth(k).get_by_label("related", exact=True).check()
        submit_and_wait(page, "#submit")


def admin_login(browser, site):
    page = browser.new_context().new_page()
    page.goto(site.base + "admin/login")
    page.fill("input[name=password]", "s3cret")
    submit_and_wait(page)
    return page


def admin_sets(page, button, current="finish"):
    page.check(f"form.intake input[name=current][value={current}]")
    submit_and_wait(page, f"form.intake #{button}")
    if button == "close" or current == "stop":            # asked again on a page of its own
        expect(page.locator("#confirm")).to_be_visible()
        assert_accessible(page, "confirmation of " + button)
        submit_and_wait(page, "#confirm")
    expect(page.locator("#intake-heading")).to_contain_text(
        {"pause": "paused", "close": "closed", "resume": "open"}[button])


def test_pause_resume_close_as_a_new_and_a_current_rater(browser, tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    url = database_url(tmp_path / "s.sqlite")
    create_study(protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2), pairs,
                 url, completion_code="SIMLEX-DONE", completion_url=BACK)
    site = Site(url)
    try:
        current = browser.new_context().new_page()
        start(current, site.base + OWN.format(pid="cur1", session="a"))
        current.locator("input[name=choice]").first.check()
        submit_and_wait(current)
        at = current.inner_text("#progress")
        admin = admin_login(browser, site)
        expect(admin.locator("#intake-heading")).to_have_text("New raters: open")
        admin_sets(admin, "pause")
        expect(admin.locator("#intake-state")).to_contain_text("may finish")

        new = browser.new_context(**PHONE).new_page()
        new.goto(site.base + OWN.format(pid="new1", session="b"))
        expect(new.locator("h2")).to_have_text("The study is paused")
        expect(new.locator("#return")).to_have_attribute("href", "https://app.prolific.com/")
        expect(new.locator("#return")).to_have_text("Back to the study platform")
        assert_accessible(new, "paused page")
        assert new.evaluate(SMALL_TARGETS) == []
        current.reload()                                   # already in: may finish
        assert current.inner_text("#progress") == at

        admin_sets(admin, "close", current="stop")
        expect(admin.locator("#intake-state")).to_contain_text("stopped too")
        current.reload()
        expect(current.locator("#message")).to_contain_text("The researcher has closed this study")
        assert "SIMLEX-DONE" not in current.content()     # the screen-out code, not completion's
        code = current.inner_text("#code")
        expect(current.locator("#return")).to_have_attribute("href", BACK.format(code=code))
        assert_accessible(current, "stopped rater's page")
        new.reload()
        expect(new.locator("h2")).to_have_text("The study has closed")

        admin_sets(admin, "resume")
        current.goto(site.base + "task")                   # back where it was
        assert current.inner_text("#progress") == at
        new.goto(site.base + OWN.format(pid="new1", session="b"))
        expect(new.locator("input[name=consent]")).to_be_visible()
    finally:
        site.close()


def test_completion_page_copy_button_and_reopening(browser, tmp_path, usf):
    site = tr9856_site(tmp_path, usf)
    link = site.base + OWN.format(pid="fin1", session="own")
    try:
        context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
        page = context.new_page()
        start(page, link)
        finish_binary(page)
        code = page.locator("#code")
        expect(code).to_have_text("TR-DONE-37")
        assert float(code.evaluate("c => parseFloat(getComputedStyle(c).fontSize)")) >= 24
        back = page.locator("#return")                     # the primary button
        expect(back).to_have_attribute("href", BACK.format(code="TR-DONE-37"))
        assert back.evaluate("a => getComputedStyle(a).backgroundColor") == \
            page.locator("#copy").evaluate("b => getComputedStyle(b).color")
        assert back.bounding_box()["height"] >= 44
        expect(page.locator("#copied")).to_have_text("")
        assert page.inner_text("main").count("TR-DONE-37") == 1     # in its box only
        before = back.bounding_box()
        page.click("#copy")
        expect(page.locator("#copied")).to_have_text("Code copied.")
        assert back.bounding_box() == before               # the notice moves nothing
        assert page.evaluate("navigator.clipboard.readText()") == "TR-DONE-37"
        assert_accessible(page, "completion")

        page.goto(link)                                    # the link again, same browser
        expect(page.locator("#code")).to_have_text("TR-DONE-37")
        other = browser.new_context().new_page()           # another browser, own link
        other.goto(link)
        expect(other.locator("#code")).to_have_text("TR-DONE-37")
        assert "another browser" not in other.content()

        plain = browser.new_context(java_script_enabled=False).new_page()   # no script
        plain.goto(link)
        expect(plain.locator("#code")).to_have_text("TR-DONE-37")
        expect(plain.locator("#copy")).to_be_hidden()      # no button that does nothing
        expect(plain.locator("#return")).to_be_visible()
    finally:
        site.close()


def test_the_session_cookie_survives_a_browser_restart(browser, tmp_path, usf):
    """The storage state of a closed browser keeps only cookies with an expiry (a browser drops
    session cookies on exit); a new browser with it resumes at the same page, unasked."""
    site = tr9856_site(tmp_path, usf)
    link = site.base + OWN.format(pid="again1", session="s")
    try:
        context = browser.new_context()
        page = context.new_page()
        start(page, link)
        first = page.locator("fieldset.pair legend").first.inner_text()
        at = page.inner_text("#progress")
        state = context.storage_state()
        context.close()
        kept = [c for c in state["cookies"] if c["expires"] > 0]
        assert [c["name"] for c in kept] == ["session"]
        assert kept[0]["expires"] > time.time() + 13 * 86400
        reopened = browser.new_context(storage_state={**state, "cookies": kept}).new_page()
        reopened.goto(link)
        assert reopened.inner_text("#progress") == at
        assert reopened.locator("fieldset.pair legend").first.inner_text() == first
        assert "another browser" not in reopened.content()
        stranger = browser.new_context().new_page()        # really another browser: asked
        stranger.goto(link)
        expect(stranger.locator("h2")).to_have_text("Continue in this browser?")
    finally:
        site.close()


def test_every_control_is_44_px_on_every_page_type_at_390(browser, tmp_path, usf):
    seen = []
    site = Site(_simlex(tmp_path, usf))
    try:
        page = browser.new_context(**PHONE).new_page()
        page.goto(site.base + OWN.format(pid="t1", session="x"))
        assert_targets(page, "simlex consent", seen)
        page.check("input[name=consent]")
        page.check("input[name=native]")
        submit_and_wait(page)
        assert_targets(page, "simlex instructions", seen)
        submit_and_wait(page)
        assert_targets(page, "simlex checkpoint", seen)
        to_first_group(page)
        assert_targets(page, "simlex slider group", seen)
    finally:
        site.close()
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol_variant(tmp_path, "hyperlex", tranches=1), pairs, url,
                 screenout_code="HL-OUT", completion_url=BACK)
    site = Site(url)
    try:
        page = browser.new_context(**PHONE).new_page()
        start(page, site.base + OWN.format(pid="h1", session="x"))
        assert_targets(page, "hyperlex qualification", seen)
        page.get_by_label("FRUIT / APPLE").check()
        submit_and_wait(page)
        assert_targets(page, "hyperlex screened out", seen)
        passed = browser.new_context(**PHONE).new_page()
        start(passed, site.base + OWN.format(pid="h2", session="x"))
        passed.get_by_label("OAK / TREE").check()
        submit_and_wait(passed)
        to_first_group(passed)
        assert_targets(passed, "hyperlex slider group", seen)
    finally:
        site.close()
    site = tr9856_site(tmp_path, usf)
    try:
        page = browser.new_context(**PHONE).new_page()
        start(page, site.base + OWN.format(pid="b1", session="own"))
        assert_targets(page, "tr9856 binary group", seen)
        finish_binary(page)
        assert_targets(page, "tr9856 completion", seen)
        other = browser.new_context(**PHONE).new_page()
        other.goto(site.base + OWN.format(pid="b2", session="x"))
        other.check("input[name=consent]")
        other.check("input[name=native]")
        submit_and_wait(other)
        third = browser.new_context(**PHONE).new_page()
        third.goto(site.base + OWN.format(pid="b2", session="x"))
        assert_targets(third, "resume question", seen)
    finally:
        site.close()
    pairs = usf_pair_file(usf, tmp_path / "bws.csv",
                          counts=(("N", "N", 12), ("V", "V", 4), ("A", "AJ", 4)))
    url = database_url(tmp_path / "bws.sqlite")
    create_study(protocol_variant(tmp_path, "simlex999_bws", raters_per_tranche=2,
                                  tuples_per_tranche=40, tuples_per_page=3), pairs, url)
    site = Site(url)
    try:
        page = browser.new_context(**PHONE).new_page()
        start(page, site.base)
        assert_targets(page, "bws page", seen)
    finally:
        site.close()
    assert len(seen) == 11, seen


def _simlex(tmp_path, usf) -> str:
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    url = database_url(tmp_path / "s.sqlite")
    create_study(protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2), pairs,
                 url, completion_url=BACK)
    return url
