"""Screenshots of the rater pages, at 1280 px and at a phone's 390 x 844, left-to-right and
right-to-left, for docs/annotate.md.

Each page type is reached as a rater reaches it (consent, instructions, checkpoint, a group of
sliders; HyperLex's qualification question; TR9856's related/unrelated page with its topic and
its completion page; the page of a paused study; the Hebrew pack's consent and sliders) on
small studies served by waitress, and photographed by Debian's Chromium through Playwright; and
the admin dashboard of a study answered by simulated raters (``lexgold study rehearse``). The
studies are built with the helpers of the browser tests (tests/), so what is shown is what the
tests check.

Run (after `bash scripts/setup.sh --test`):

    .venv/bin/python scripts/screenshots.py            # writes docs/screenshots/*.png
    .venv/bin/python scripts/screenshots.py --only dashboard
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402

from lexgold.study.db import database_url  # noqa: E402
from lexgold.study.intake import set_intake  # noqa: E402
from lexgold.study.store import create_study  # noqa: E402
from lexgold.resources import read_usf  # noqa: E402
from test_annotate_app import protocol_variant, tr9856_pair_file, usf_pair_file  # noqa: E402
from test_annotate_browser import ARGS, CHROMIUM, Site, start, submit_and_wait  # noqa: E402
from test_languages_browser import hebrew_pairs, hebrew_protocol  # noqa: E402

VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def site(folder: Path, protocol: Path, pairs: Path) -> Site:
    url = database_url(folder / "study.sqlite")
    create_study(protocol, pairs, url, seed=1, completion_code="DONE-CODE",
                 completion_url="https://app.prolific.com/submissions/complete?cc={code}")
    return Site(url)


def paused(page, server: Site, out: Path, view: str) -> str:
    """The page a new rater gets while the study is paused (``lexgold study pause``)."""
    with server.app.extensions["lexgold"].sessions() as session:
        set_intake(session, "paused")
    server.app.extensions.pop("lexgold_intake", None)
    page.goto(f"{server.base}?PROLIFIC_PID=paused{view}")
    name = shoot(page, out, "simlex-paused", view)
    with server.app.extensions["lexgold"].sessions() as session:
        set_intake(session, "open")
    server.app.extensions.pop("lexgold_intake", None)
    return name


def studies(base: Path) -> dict[str, tuple[Site, str]]:
    """A small study per protocol: (served site, direction of its script)."""
    usf = read_usf()
    made = {}
    for name, pairs, direction in (
            ("simlex", lambda p: usf_pair_file(usf, p), "ltr"),
            ("hyperlex", lambda p: usf_pair_file(usf, p, (("N", "N", 60), ("V", "V", 20))),
             "ltr"),
            ("tr9856", lambda p: tr9856_pair_file(usf, p), "ltr"),
            ("hebrew", hebrew_pairs, "rtl")):
        folder = base / name
        folder.mkdir()
        protocol = hebrew_protocol(folder) if name == "hebrew" else protocol_variant(
            folder, name, tranches=2 if name != "tr9856" else 1, raters_per_tranche=2)
        pairs(folder / "pairs.csv")
        made[name] = (site(folder, protocol, folder / "pairs.csv"), direction)
    return made


def shoot(page, out: Path, name: str, view: str) -> str:
    path = out / f"{name}-{view}.png"
    page.screenshot(path=str(path), full_page=True)
    return path.name


def walk(page, base_url: str, study: str, view: str, out: Path, rater: str) -> list[str]:
    """Photograph each page type of ``study`` on the way through a tranche."""
    taken = []
    page.goto(f"{base_url}?PROLIFIC_PID={rater}")
    taken.append(shoot(page, out, f"{study}-consent", view))
    if study == "hebrew":
        start(page, f"{base_url}?PROLIFIC_PID={rater}")
    else:
        page.check("input[name=consent]")
        page.check("input[name=native]")
        submit_and_wait(page)
        taken.append(shoot(page, out, f"{study}-instructions", view))
        while page.locator("input[name=page]").count():
            submit_and_wait(page)
    for _ in range(6):                     # the first pages: checkpoint, qualification, pairs
        if page.locator("fieldset.pair input[type=range]").count():
            taken.append(shoot(page, out, f"{study}-sliders", view))
            break
        if page.locator("fieldset.pair input[type=radio]").count():
            taken.append(shoot(page, out, f"{study}-binary", view))
            while not page.locator("#message").count():     # to the completion page
                for box in page.locator("fieldset.pair").all():
                    box.locator("input[type=radio]").first.check()
                submit_and_wait(page, "#submit")
            taken.append(shoot(page, out, f"{study}-completion", view))
            break
        if page.locator("input[name=choice]").count():
            kind = "qualification" if study == "hyperlex" else "checkpoint"
            taken.append(shoot(page, out, f"{study}-{kind}", view))
            page.locator("input[name=choice]").first.check()
            submit_and_wait(page)
            if study == "hyperlex":
                break                      # the first option may fail the qualification
    return taken


def dashboard(browser, folder: Path, out: Path) -> str:
    """The admin dashboard of a small SimLex study (3 tranches, 8 places each) answered by
    ``lexgold study rehearse``'s simulated raters, its figures computed, at 1280 px."""
    from click.testing import CliRunner

    from lexgold.cli import cli
    from lexgold.live import refresher

    pairs = usf_pair_file(read_usf(), folder / "pairs.csv")
    protocol = protocol_variant(folder, "simlex", tranches=3, raters_per_tranche=8)
    url = database_url(folder / "study.sqlite")
    create_study(protocol, pairs, url, seed=1, completion_code="DONE-CODE")
    done = CliRunner().invoke(cli, ["study", "rehearse", url, "--seed", "1", "--quiet"])
    assert done.exit_code == 0, done.output
    server = Site(url)
    try:
        for _ in range(3):          # the first rounds fill the agreement curve in
            state = server.app.extensions["lexgold"]
            with state.reads() as reads, state.sessions() as writes:
                refresher.refresh(reads, writes, force=True)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(server.base + "admin/login")
        page.fill("input[name=password]", "s3cret")
        submit_and_wait(page)
        path = out / "admin-dashboard-desktop.png"
        page.locator("#dashboard").screenshot(path=str(path))
        page.close()
    finally:
        server.close()
    return path.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--only", choices=["rater", "dashboard"], default=None,
                        help="Only the rater pages, or only the admin dashboard.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS,
                                             headless=True)
        if args.only != "rater":
            (Path(tmp) / "dashboard").mkdir()
            print("dashboard:", dashboard(browser, Path(tmp) / "dashboard", args.out))
            if args.only == "dashboard":
                browser.close()
                return
        served = studies(Path(tmp))
        try:
            for study, (server, _) in served.items():
                for k, (view, size) in enumerate(VIEWPORTS.items()):
                    context = browser.new_context(viewport=size, device_scale_factor=1,
                                                  has_touch=view == "phone",
                                                  is_mobile=view == "phone")
                    names = walk(context.new_page(), server.base, study, view, args.out,
                                 f"shot{k}{study}")
                    if study == "simlex":
                        names.append(paused(context.new_page(), server, args.out, view))
                    context.close()
                    print(f"{study} {view}: {', '.join(names)}")
        finally:
            for server, _ in served.values():
                server.close()
            browser.close()


if __name__ == "__main__":
    main()
