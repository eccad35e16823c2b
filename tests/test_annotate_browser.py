"""Headless Debian Chromium (Playwright) through real tranches served by waitress.

A full SimLex tranche (sliders set by keyboard, by mouse click and left deliberately at their
start value; checkpoints), a HyperLex tranche with a failed and a passed qualification, and a
TR9856 tranche (related / unrelated). The stored answers must equal what was clicked.
"""

import re
import threading
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select, update

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import make_app, protocol_variant, tr9856_pair_file, usf_pair_file

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS,
                                             headless=True)
        yield browser
        browser.close()


class Site:
    """A study served by waitress on 127.0.0.1 and a free port, in a thread."""

    def __init__(self, url):
        from waitress.server import create_server
        self.app = make_app(url)
        self.server = create_server(self.app, host="127.0.0.1", port=0, threads=4)
        self.base = f"http://127.0.0.1:{self.server.effective_port}/"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        from waitress import wasyncore
        while not self.stop.is_set():
            wasyncore.loop(timeout=0.1, map=self.server._map, count=1)

    def stored(self):
        with self.app.extensions["lexgold"].sessions() as session:
            ratings = dict(session.execute(select(m.Answer.item_id, m.Answer.rating)).all())
            checks = session.execute(select(m.CheckpointAnswer.choice,
                                            m.CheckpointAnswer.correct)).all()
        return ratings, checks

    def close(self):
        self.stop.set()
        self.thread.join()
        self.server.close()
        self.app.extensions["lexgold_engine"].dispose()


def start(page, url):
    """Enter, consent and read every instruction page; returns the instructions' text."""
    page.goto(url)
    page.check("input[name=consent]")
    page.check("input[name=native]")
    submit_and_wait(page)
    read = []
    while page.locator("input[name=page]").count():
        read.append(page.inner_text("main"))
        submit_and_wait(page)
    return "\n".join(read)


def qualification_is_not_in(page, instructions):
    """No word of any qualification option was shown in the instructions (else it tests
    nothing: HyperLex section 4.4 screens raters who did not understand the guidelines)."""
    options = page.locator("form.choice label").all_inner_texts()
    words = {w for option in options for w in re.findall(r"\w+", option.upper())}
    assert len(options) >= 3 and words
    shown = set(re.findall(r"\w+", instructions.upper()))
    assert not words & shown, words & shown


def submit_and_wait(page, selector="button[type=submit]"):
    with page.expect_navigation():
        page.click(selector)


def set_slider(page, slider, value, how, scale_max=6):
    """Move a slider to ``value`` by keyboard, mouse click, or keep its start (Space key)."""
    if how == "keyboard":
        slider.focus()
        page.keyboard.press("Home")
        for _ in range(value):
            page.keyboard.press("ArrowRight")
    elif how == "click":
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        thumb = 28                         # lexgold.css: --thumb
        x = box["x"] + thumb / 2 + (box["width"] - thumb) * value / scale_max
        page.mouse.click(x, box["y"] + box["height"] / 2)
    else:
        slider.focus()
        page.keyboard.press(" ")


def rate_slider_page(page, plan, code):
    """Rate every slider of a group page; returns {item_id: value}. Checks the UI on the way."""
    assert code not in page.content()
    boxes = page.locator("fieldset.pair")
    submit = page.locator("#submit")
    page.wait_for_load_state()
    chosen = {}
    for k in range(boxes.count()):
        expect(submit).to_be_disabled()          # not before every slider was touched
        box = boxes.nth(k)
        item = int(box.get_attribute("data-item"))
        slider = box.locator("input[type=range]")
        assert "untouched" in slider.get_attribute("class")
        assert box.locator("output").inner_text() == "–"
        value, how = plan(item, k)
        if how == "start":
            value = int(slider.get_attribute("value"))
        set_slider(page, slider, value, how)
        expect(box.locator("output")).to_have_text(str(value))
        chosen[item] = value
    expect(submit).to_be_enabled()
    submit_and_wait(page, "#submit")
    return chosen


def test_full_simlex_tranche(browser, tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    url = database_url(tmp_path / "b.sqlite")
    create_study(protocol, pairs, url, completion_code="SIMLEX-DONE")
    site = Site(url)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=browser1&STUDY_ID=s1&SESSION_ID=x1")
        ways = ["keyboard", "click", "start"]
        clicked, picks, calibration_notes = {}, [], 0
        while not page.locator("#message").count():
            if page.locator("input[name=choice]").count():
                assert "SIMLEX-DONE" not in page.content()
                labels = page.locator("label").all_inner_texts()
                right = next(i for i, t in enumerate(labels)
                             if any(w in t for w in ("difficulty", "ship", "toast", "chilly",
                                                     "purchase")))
                wrong = len(picks) == 3              # the adjective checkpoint answered wrong
                pick = (right + 1) % len(labels) if wrong else right
                page.locator("input[name=choice]").nth(pick).check()
                picks.append(not wrong)
                submit_and_wait(page)
                continue
            calibration_notes += page.locator("fieldset.calibration .note").count()
            clicked.update(rate_slider_page(
                page, lambda item, k: ((item + k) % 7, ways[k % 3]), "SIMLEX-DONE"))
        assert page.inner_text("#code") == "SIMLEX-DONE"
        ratings, checks = site.stored()
        assert ratings == clicked and len(clicked) > 100
        # abstract and concrete after the instructions, then N, A (answered wrong), V
        assert [c.correct for c in checks] == picks == [True, True, True, False, True]
        assert calibration_notes >= 15
    finally:
        site.close()


def test_hyperlex_tranche_with_failed_and_passed_qualification(browser, tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol, pairs, url, completion_code="HL-DONE", screenout_code="HL-OUT")
    site = Site(url)
    try:
        failed = browser.new_context().new_page()
        start(failed, site.base + "?workerId=W1&assignmentId=A1&hitId=H1")
        failed.get_by_label("FRUIT / APPLE").check()      # the wrong direction
        submit_and_wait(failed)
        assert "attempts left: 1" in failed.inner_text("p.error")   # asked again
        failed.get_by_label("FRUIT / APPLE").check()      # wrong again: the last attempt
        submit_and_wait(failed)
        assert failed.inner_text("#code") == "HL-OUT"
        assert "HL-DONE" not in failed.content()
        assert site.stored() == ({}, [])
        passed = browser.new_context().new_page()
        instructions = start(passed, site.base + "?workerId=W2&assignmentId=A2&hitId=H2")
        qualification_is_not_in(passed, instructions)
        passed.get_by_label("OAK / TREE").check()
        submit_and_wait(passed)
        clicked = {}
        verbs = 0
        while not passed.locator("#message").count():
            verbs += passed.get_by_text("a type of TO ").count()
            clicked.update(rate_slider_page(passed, lambda item, k: (item % 7, "keyboard"),
                                            "HL-DONE"))
        assert passed.inner_text("#code") == "HL-DONE"
        assert site.stored()[0] == clicked and verbs > 0
    finally:
        site.close()


def test_tr9856_tranche(browser, tmp_path, usf):
    pairs = tr9856_pair_file(usf, tmp_path / "t.csv")
    url = database_url(tmp_path / "t.sqlite")
    create_study("tr9856", pairs, url, completion_code="TR-DONE")
    site = Site(url)
    try:
        page = browser.new_page()
        start(page, site.base)
        clicked = {}
        while not page.locator("#message").count():
            assert page.locator("h2.topic").inner_text().startswith("Topic: ")
            boxes = page.locator("fieldset.pair")
            for k in range(boxes.count()):
                box = boxes.nth(k)
                item = int(box.get_attribute("data-item"))
                label = "related" if item % 3 else "unrelated"
                box.get_by_label(label, exact=True).check()
                clicked[item] = int(label == "related")
            submit_and_wait(page, "#submit")
        assert page.inner_text("#code") == "TR-DONE"
        assert site.stored()[0] == clicked and set(clicked.values()) == {0, 1}
    finally:
        site.close()


def simlex_site(tmp_path, usf, **values):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", **{"tranches": 2, "raters_per_tranche": 2,
                                                       **values})
    url = database_url(tmp_path / "s.sqlite")
    create_study(protocol, pairs, url, completion_code="SIMLEX-DONE")
    return Site(url)


def to_first_group(page):
    """Answer checkpoints (first option) until a page of sliders shows."""
    while page.locator("input[name=choice]").count():
        page.locator("input[name=choice]").first.check()
        submit_and_wait(page)


def test_back_button_never_restores_old_answers(browser, tmp_path, usf):
    """Rate a group 6,0,6,..., submit, press Back: the page shown is the current one and every
    slider sits untouched at its own start; keeping the start stores the start value."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=back1&STUDY_ID=s1&SESSION_ID=x1")
        to_first_group(page)
        first = rate_slider_page(page, lambda item, k: (6 if k % 2 == 0 else 0, "keyboard"),
                                 "SIMLEX-DONE")
        current = page.locator("fieldset.pair").evaluate_all(
            "boxes => boxes.map(b => +b.dataset.item)")
        page.go_back()
        page.wait_for_load_state()
        boxes = page.locator("fieldset.pair")
        assert boxes.evaluate_all("boxes => boxes.map(b => +b.dataset.item)") == current
        for k in range(boxes.count()):
            slider = boxes.nth(k).locator("input[type=range]")
            assert slider.evaluate("s => s.value") == slider.get_attribute("value") == "3"
            assert "untouched" in slider.get_attribute("class")
            assert boxes.nth(k).locator("output").inner_text() == "–"
            assert boxes.nth(k).locator("input.rating-value").evaluate("i => i.value") == ""
        kept = rate_slider_page(page, lambda item, k: (None, "start"), "SIMLEX-DONE")
        assert set(kept.values()) == {3}
        with site.app.extensions["lexgold"].sessions() as session:
            stored = dict(session.execute(select(m.Answer.item_id, m.Answer.rating)).all())
            starts = set(session.scalars(select(m.Answer.start_value)))
        assert stored == {**first, **kept} and starts == {3}
    finally:
        site.close()


def test_second_participant_in_the_same_browser_is_a_new_rater(browser, tmp_path, usf):
    """A shared lab computer: an entry link with another platform ID starts that rater, and a
    finished rater's completion code is never shown to the next one."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_context().new_page()
        start(page, site.base + "?PROLIFIC_PID=tab0001&STUDY_ID=s1&SESSION_ID=x1")
        with site.app.extensions["lexgold"].sessions() as session:
            session.execute(update(m.Rater).values(stage="done"))   # tab0001 has finished
            session.commit()
        page.goto(site.base + "?PROLIFIC_PID=otherperson99&STUDY_ID=s1&SESSION_ID=x2")
        assert page.locator("input[name=consent]").count()
        start(page, site.base + "?PROLIFIC_PID=otherperson99&STUDY_ID=s1&SESSION_ID=x2")
        assert "SIMLEX-DONE" not in page.content()
        assert page.locator("input[name=choice], fieldset.pair").count()
        with site.app.extensions["lexgold"].sessions() as session:
            raters = dict(session.execute(select(m.Rater.external_id, m.Rater.stage)).all())
        assert raters == {"tab0001": "done", "otherperson99": "rating"}
        page.goto(site.base + "?PROLIFIC_PID=tab0001&STUDY_ID=s1&SESSION_ID=x1")
        # the browser holds otherperson99; tab0001's own link shows its completion page again,
        # unasked and moving nothing (issue 37)
        assert page.inner_text("#code") == "SIMLEX-DONE"
        assert "another browser" not in page.content()
        page.goto(site.base + "?PROLIFIC_PID=otherperson99&STUDY_ID=s1&SESSION_ID=x2")
        assert "SIMLEX-DONE" not in page.content()
        assert page.locator("input[name=choice], fieldset.pair").count()
    finally:
        site.close()


def test_untouched_slider_suggests_no_answer_and_shows_the_scale_points(browser, tmp_path, usf):
    """An untouched slider looks the same whatever its start value (no fill, no thumb, no
    number); the scale points 0-6 are shown under every slider."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        start(page, site.base + "?PROLIFIC_PID=fill1&STUDY_ID=s1&SESSION_ID=x1")
        to_first_group(page)
        box = page.locator("fieldset.pair").first
        slider = box.locator("input[type=range]")
        assert box.locator(".ticks").inner_text().split() == [str(v) for v in range(7)]
        pictures = []
        for value in ("3", "0", "6"):
            slider.evaluate(f"s => {{ s.value = '{value}'; }}")   # no event: still untouched
            pictures.append(slider.screenshot())
        assert pictures[0] == pictures[1] == pictures[2]
        assert box.locator("output").inner_text() == "–"
        set_slider(page, slider, 5, "keyboard")
        assert slider.screenshot() != pictures[0]                 # touched: the thumb shows
        expect(box.locator("output")).to_have_text("5")
    finally:
        site.close()


def test_phone_layout_full_width_slider_and_tap(browser, tmp_path, usf):
    """At 390 px (a phone, touch): end labels above the slider, the slider spans the box, its
    touch target is at least 44 px high and a step at least 44 px wide, questions stay inside
    their box, and the hint says 'tap'. A tranche page is rated by tapping."""
    site = simlex_site(tmp_path, usf)
    try:
        context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                      is_mobile=True)
        page = context.new_page()
        start(page, site.base + "?PROLIFIC_PID=phone1&STUDY_ID=s1&SESSION_ID=x1")
        to_first_group(page)
        assert "tap" in page.locator(".hint").inner_text().lower()
        boxes = page.locator("fieldset.pair")
        chosen = {}
        for k in range(boxes.count()):
            box = boxes.nth(k)
            slider = box.locator("input[type=range]")
            slider.scroll_into_view_if_needed()
            frame, bar = box.bounding_box(), slider.bounding_box()
            legend = box.locator("legend").bounding_box()
            border = box.evaluate("b => parseFloat(getComputedStyle(b).borderTopWidth)")
            assert legend["y"] >= frame["y"] + border              # not cut by the border
            assert legend["x"] + legend["width"] <= frame["x"] + frame["width"]
            assert bar["width"] >= 0.8 * frame["width"] and bar["height"] >= 44
            assert (bar["width"] - 28) / 6 >= 44
            for end in box.locator(".end").all():
                assert end.bounding_box()["y"] + end.bounding_box()["height"] <= bar["y"] + 1
            item, value = int(box.get_attribute("data-item")), k % 7
            x = bar["x"] + 14 + (bar["width"] - 28) * value / 6
            page.touchscreen.tap(x, bar["y"] + bar["height"] / 2)
            expect(box.locator("output")).to_have_text(str(value))
            chosen[item] = value
        submit_and_wait(page, "#submit")
        assert site.stored()[0] == chosen
    finally:
        site.close()


def test_blocked_submit_says_why_and_marks_the_unanswered_pairs(browser, tmp_path, usf):
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=why1&STUDY_ID=s1&SESSION_ID=x1")
        to_first_group(page)
        boxes, submit, why = page.locator("fieldset.pair"), page.locator("#submit"), \
            page.locator("#why")
        n = boxes.count()
        expect(submit).to_be_disabled()
        expect(why).to_be_visible()
        assert str(n) in why.inner_text()
        for k in range(n - 1):
            set_slider(page, boxes.nth(k).locator("input[type=range]"), 2, "keyboard")
        assert "1" in why.inner_text() and str(n) not in why.inner_text()
        url = page.url
        submit.click(force=True)                       # a click on the blocked button
        assert page.url == url and site.stored()[0] == {}
        expect(boxes.nth(n - 1)).to_have_class(re.compile(r"\bmissing\b"))
        expect(boxes.nth(n - 1).locator(".missing-note")).to_be_visible()
        assert page.locator("fieldset.missing").count() == 1
        expect(boxes.nth(n - 1).locator("input[type=range]")).to_be_focused()
        page.keyboard.press(" ")                       # keep its start value
        expect(why).to_be_hidden()
        assert page.locator("fieldset.missing").count() == 0
        expect(submit).to_be_enabled()
        submit_and_wait(page, "#submit")
        assert len(site.stored()[0]) == n
    finally:
        site.close()


def test_without_javascript_the_page_says_it_is_needed(browser, tmp_path, usf):
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_context(java_script_enabled=False).new_page()
        start(page, site.base + "?PROLIFIC_PID=nojs1&STUDY_ID=s1&SESSION_ID=x1")
        to_first_group(page)
        notice = page.locator(".nojs")
        expect(notice).to_be_visible()
        assert "JavaScript" in notice.inner_text()
        expect(page.locator("#submit")).to_be_disabled()
    finally:
        site.close()


@pytest.mark.parametrize("query,parameter", [
    ("?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
     "PROLIFIC_PID"),
    ("?workerId=&assignmentId=A1&hitId=H1", "workerId"),
    ("?PROLIFIC_PID=p1&STUDY_ID=s%20t&SESSION_ID=x1", "STUDY_ID")])
def test_bad_entry_link_says_what_is_wrong(browser, tmp_path, usf, query, parameter):
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        response = page.goto(site.base + query)
        assert response.status == 400
        message = page.inner_text("#message")
        assert parameter in message and "link" in message and "reload" not in message.lower()
        assert not page.locator("input[name=consent]").count()
    finally:
        site.close()


def test_consent_states_what_is_stored_and_one_progress_count(browser, tmp_path, usf):
    """A platform ID is stored, so the consent text must not promise anonymity; instruction
    pages carry no page count of their own: the only count is the tranche's pages."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=cons1&STUDY_ID=s1&SESSION_ID=x1")
        consent = page.inner_text("main").lower()
        assert "anonym" not in consent and "platform id" in consent
        page.check("input[name=consent]")
        page.check("input[name=native]")
        submit_and_wait(page)
        counts = []
        while page.locator("input[name=page]").count():
            counts.append(page.locator(".progress").count())
            submit_and_wait(page)
        to_first_group(page)
        assert counts and set(counts) == {0}
        assert page.locator(".progress").count() == 1
        # three checkpoints (two after the instructions, the noun one), then the first group
        assert re.fullmatch(r"Page 4 of \d+", page.locator(".progress").inner_text())
    finally:
        site.close()


def test_topic_pages_show_the_topic_title(browser, tmp_path, usf):
    """TR9856 pairs name their topic by id (`lexgold build tr9856`); raters see its
    definition from the topics file."""
    from lexgold.builder.tr9856_topics import read_topics
    from lexgold.protocols import protocol_path
    topics_file = protocol_path("tr9856").parent / "tr9856_enwiki_sample_topics.toml"
    topics = {t.key: t.definition for t in read_topics(topics_file)}
    pairs = tr9856_pair_file(usf, tmp_path / "t.csv")
    frame = pd.read_csv(pairs)
    keys = list(topics)[:2]
    frame["topic"] = [keys[0]] * 12 + [keys[1]] * 12
    frame.to_csv(pairs, index=False)
    url = database_url(tmp_path / "t.sqlite")
    create_study("tr9856", pairs, url, completion_code="TR-DONE", topics=topics_file)
    site = Site(url)
    try:
        page = browser.new_page()
        start(page, site.base)
        shown = page.locator("h2.topic").inner_text()
        assert shown in {f"Topic: {topics[k]}" for k in keys}
        assert not any(k in shown for k in keys)
    finally:
        site.close()


def designed_items(site):
    """Items per tranche as stored: pairs and checkpoints (counted independently of flow)."""
    with site.app.extensions["lexgold"].sessions() as session:
        items = session.execute(select(m.Item.tranche_id)).scalars().all()
        checks = session.execute(select(m.Step.tranche_id).where(
            m.Step.kind == "checkpoint")).scalars().all()
    return [items.count(t) + checks.count(t) for t in sorted(set(items))]


@pytest.mark.parametrize("protocol", ["simlex", "hyperlex", "tr9856"])
def test_consent_page_states_the_expected_duration(browser, tmp_path, usf, protocol):
    if protocol == "tr9856":
        pairs = tr9856_pair_file(usf, tmp_path / "p.csv")
        path = protocol
    else:
        counts = (("N", "N", 60), ("V", "V", 20)) if protocol == "hyperlex" else \
            (("N", "N", 144), ("V", "V", 44), ("A", "AJ", 22))
        pairs = usf_pair_file(usf, tmp_path / "p.csv", counts)
        path = protocol_variant(tmp_path, protocol, tranches=2 if protocol == "simlex" else 1)
    url = database_url(tmp_path / "d.sqlite")
    create_study(path, pairs, url)
    site = Site(url)
    try:
        items = designed_items(site)
        if protocol == "hyperlex":                      # one average: 7.5 s, + qualification
            expected = f"about {round((sum(items) / len(items) + 1) * 7.5 / 60)} minutes"
        else:                            # a range: 3.9 s to 10.2 s (TR9856: 10.3 s) per item
            low = int(min(items) * 3.9 // 60)
            high = -int(-max(items) * (10.2 if protocol == "simlex" else 10.3) // 60)
            expected = f"about {low}\u2013{high} minutes"
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=dur1&STUDY_ID=s1&SESSION_ID=x1")
        assert expected in page.inner_text("main")
    finally:
        site.close()


def assert_accessible(page, name):
    """axe-core (axe-playwright-python) finds no serious or critical violation on the page."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe()
    violations = axe.run(page).response["violations"]
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations
           if v["impact"] in ("serious", "critical")]
    assert not bad, (name, bad)


def assert_slider_pages_accessible(page):
    """axe on every page from a SimLex-style study's consent page to a slider group with its
    unanswered pairs marked: consent, instructions, checkpoint, group."""
    assert_accessible(page, "consent")
    page.check("input[name=consent]")
    page.check("input[name=native]")
    submit_and_wait(page)
    assert_accessible(page, "instructions")
    submit_and_wait(page)
    assert_accessible(page, "checkpoint")
    to_first_group(page)
    assert_accessible(page, "group")
    page.locator("#submit").click(force=True)
    expect(page.locator("fieldset.missing").first).to_be_visible()
    assert_accessible(page, "group with unanswered pairs marked")


def test_every_rater_page_type_passes_axe(browser, tmp_path, usf):
    """Consent, instructions, checkpoint, slider group (also with unanswered pairs marked),
    qualification, binary group and message pages, left to right."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=axe1&STUDY_ID=s1&SESSION_ID=x1")
        assert_slider_pages_accessible(page)
        page.goto(site.base + "?PROLIFIC_PID={{%PROLIFIC_PID%}}")
        assert_accessible(page, "message")
    finally:
        site.close()
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol_variant(tmp_path, "hyperlex", tranches=1), pairs, url)
    site = Site(url)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=axe2&STUDY_ID=s1&SESSION_ID=x1")
        assert_accessible(page, "qualification")
        page.locator("input[name=choice]").first.check()
        submit_and_wait(page)                              # wrong: asked again, once
        expect(page.locator("p.error[role=alert]")).to_contain_text("attempts left: 1")
        assert_accessible(page, "qualification asked again")
        page.locator("input[name=choice]").first.check()
        submit_and_wait(page)
        expect(page.locator("#code")).to_be_visible()
        assert_accessible(page, "screened out")
    finally:
        site.close()
    url = database_url(tmp_path / "t.sqlite")
    create_study("tr9856", tr9856_pair_file(usf, tmp_path / "t.csv"), url)
    site = Site(url)
    try:
        page = browser.new_page()
        start(page, site.base)
        assert_accessible(page, "binary group")
    finally:
        site.close()


def tab_to(page, selector, limit=40):
    """Press Tab until the focused element matches ``selector`` (fails after ``limit``)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement.matches({selector!r})"):
            return
    raise AssertionError(f"Tab never reached {selector}")


def press_and_wait(page, key):
    with page.expect_navigation():
        page.keyboard.press(key)


def test_a_tranche_with_the_keyboard_only(browser, tmp_path, usf):
    """Consent, instructions, checkpoints and every slider of a SimLex tranche by Tab, Space,
    arrows and Enter; the stored answers are the keyed ones."""
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=keys1&STUDY_ID=s1&SESSION_ID=x1")
        tab_to(page, "input[name=consent]")
        page.keyboard.press("Space")
        tab_to(page, "input[name=native]")
        page.keyboard.press("Space")
        tab_to(page, "button[type=submit]")
        press_and_wait(page, "Enter")
        keyed, picks = {}, 0
        while not page.locator("#message").count():
            if page.locator("input[name=page]").count():
                tab_to(page, "button[type=submit]")
                press_and_wait(page, "Enter")
            elif page.locator("input[name=choice]").count():
                tab_to(page, "input[name=choice]")
                page.keyboard.press("ArrowDown")              # moves to and checks an option
                assert page.locator("input[name=choice]:checked").count() == 1
                picks += 1
                tab_to(page, "button[type=submit]")
                press_and_wait(page, "Enter")
            else:
                boxes = page.locator("fieldset.pair")
                for k in range(boxes.count()):
                    tab_to(page, f"#s{boxes.nth(k).get_attribute('data-item')}")
                    item, value = int(boxes.nth(k).get_attribute("data-item")), (k * 5) % 7
                    page.keyboard.press("Home")
                    for _ in range(value):
                        page.keyboard.press("ArrowRight")
                    keyed[item] = value
                tab_to(page, "#submit")
                press_and_wait(page, "Enter")
        assert page.inner_text("#code") == "SIMLEX-DONE"
        ratings, checks = site.stored()
        assert ratings == keyed and len(checks) == picks == 5
    finally:
        site.close()


def test_progress_bar_primary_button_and_favicon(browser, tmp_path, usf):
    site = simlex_site(tmp_path, usf)
    try:
        page = browser.new_page()
        missing = []
        page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
        start(page, site.base + "?PROLIFIC_PID=look1&STUDY_ID=s1&SESSION_ID=x1")
        bar = page.locator("progress.bar")
        total = int(bar.get_attribute("max"))
        assert page.locator(".progress").inner_text() == f"Page 1 of {total}"
        assert bar.evaluate("b => b.value") == 0
        to_first_group(page)
        assert bar.evaluate("b => [b.value, b.max]") == [3, total]     # after 3 checkpoints
        button = page.locator("#submit")
        style = button.evaluate("b => [getComputedStyle(b).backgroundColor, "
                                "getComputedStyle(b).color, b.getBoundingClientRect().height]")
        assert style[0] != "rgb(239, 239, 239)" and style[1] == "rgb(255, 255, 255)"
        assert style[2] >= 44
        icon = page.locator("link[rel=icon]").get_attribute("href")
        response = page.request.get(site.base.rstrip("/") + icon)
        assert response.ok and response.headers["content-type"].startswith("image/svg+xml")
        assert not missing
    finally:
        site.close()
