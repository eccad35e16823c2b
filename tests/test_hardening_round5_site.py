"""Security round 5, the site half (issue 48 items 1, 2, 4 and 8; docs/hardening.md, "Round 5").
Each test is the probe that found the weakness and failed before its fix.
"""

import logging
import random
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import delete, select
from sqlalchemy.exc import OperationalError

from lexgold.cli import cli
from lexgold.errors import InputError, redact
from lexgold.pairfiles import read_pair_table
from lexgold.study import models as m
from lexgold.study import preview_links
from lexgold.study.db import database_url, downgrade, make_engine, session_factory, upgrade
from lexgold.study.store import create_study
from lexgold.tables import word_problem
from test_annotate_app import make_app, protocol_variant, usf_pair_file

KEY = "round5-key-" + "k" * 32
TOKEN = "Zm9vYmFyYmF6cXV4.c2VjcmV0LXRva2Vu"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, *needles) -> str:
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    line = result.output.strip()
    assert line.startswith("Error: ") and "\n" not in line, line
    for needle in needles:
        assert needle in line, line
    return line


@pytest.fixture
def pairs(usf, tmp_path):
    return usf_pair_file(usf, tmp_path / "pairs.csv", (("N", "N", 40), ("V", "V", 20)))


def small_study(tmp_path, pairs, name="a", **create):
    url = database_url(tmp_path / f"{name}.sqlite")
    create_study(protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2), pairs,
                 url, seed=5, completion_code="R5-DONE", screenout_code="R5-OUT", **create)
    return url


# -- 1. tokens in paths are masked in every log line ------------------------------------------

def test_a_move_or_preview_token_stays_out_of_the_log_while_the_database_is_down(
        tmp_path, pairs, caplog):
    """Before: with the database down, ``GET /move/<token>`` logged ``database unavailable for
    GET /move/<token>`` whole; a reader of the log could open the link and take the rater's
    place. Now the path segment after every token route is masked."""
    app = make_app(small_study(tmp_path, pairs), SECRET_KEY=KEY)

    @app.before_request
    def _down():
        raise OperationalError("SELECT 1", {}, Exception("could not connect to server"))

    caplog.set_level(logging.INFO)
    client = app.test_client()
    for path in (f"/move/{TOKEN}", f"/preview/{TOKEN}", f"/preview/{TOKEN}/1/0"):
        assert client.get(path).status_code == 503
    assert "database unavailable for GET /move/***: could not connect" in caplog.text
    assert "/preview/***/1/0" in caplog.text
    assert TOKEN not in caplog.text
    # waitress's and gunicorn's loggers carry the same filter ("exception while serving")
    logging.getLogger("waitress").error("Exception while serving /move/%s", TOKEN)
    logging.getLogger("gunicorn.error").error("Error handling request /preview/%s", TOKEN)
    assert TOKEN not in caplog.text and "serving /move/***" in caplog.text


def test_the_masked_paths_are_the_sites_token_routes(tmp_path, pairs):
    """One rule: the routes with a ``<token>`` variable, found in the URL map, so a new token
    route is masked without a second edit."""
    from lexgold.annotate.app import token_paths
    from lexgold.errors import TOKEN_PATHS

    app = make_app(small_study(tmp_path, pairs), SECRET_KEY=KEY)
    paths = token_paths(app.url_map)
    assert {"/move/", "/preview/"} <= set(paths) and set(TOKEN_PATHS) <= set(paths)
    app.add_url_rule("/claim/<token>", "claim", lambda token: token)
    assert "/claim/" in token_paths(app.url_map)
    assert redact(f"GET /claim/{TOKEN} 503", token_paths(app.url_map)) == "GET /claim/*** 503"
    assert "/admin/" not in paths and "/" not in paths


# -- 2. redact is linear; a long consent contact is refused in one short line ---------------

#: the patterns of redact before round 5 (a reference for what it masks; quadratic on long
#: runs of letters)
OLD_URL = r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]*:)(?P<secret>[^\s@/'\"]+)(?=@)"
OLD_KEYWORD = (r"(?P<key>\b\w*(?:password|passwd|pwd|token|secret|key)\s*=\s*)"
               r"(?P<value>[^\s&;,'\"]+)")


def old_redact(text: str) -> str:
    text = re.sub(OLD_URL, r"\g<head>***", text)
    return re.sub(OLD_KEYWORD, r"\g<key>***", text, flags=re.IGNORECASE)


def test_redact_masks_as_before_on_random_and_adversarial_lines():
    """The linear patterns mask exactly what the old ones masked (random lines over the
    characters that matter), and long adversarial lines are masked right."""
    rng = random.Random(48)
    alphabet = ["a", "Z", "1", "+", ".", "-", ":", "/", "@", " ", "=", "'", "&",
                "://", "u:p@", "password=", "key=", "x://u:pw@h"]
    for _ in range(3_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert redact(line, ()) == old_redact(line), line
    assert redact("a" * 250_000 + "://user:hunter2@db/s").endswith("://user:***@db/s")
    assert redact("1" * 100_000 + "pg://u:hunter2@h").endswith("1pg://u:***@h")
    assert redact("1" * 100_000 + "://u:hunter2@h").endswith("://u:hunter2@h")   # no scheme
    assert redact("a://" * 60_000) == "a://" * 60_000
    assert redact("password" * 30_000 + "=hunter2").endswith("password=***")
    from lexgold.errors import TOKEN_PATHS

    line = "GET /move/" + "a" * 250_000
    assert redact(line, TOKEN_PATHS) == "GET /move/***"
    assert redact("out/preview/ratings.csv: file not found") == \
        "out/preview/ratings.csv: file not found"        # a command's path is no URL


def test_a_long_consent_contact_is_refused_in_one_short_line(tmp_path, pairs):
    """Before: a 200,000-character contact was refused after 24.7 s with the whole value in
    the message (redact quadratic over it). Now the message shows the start and the
    length."""
    consent = tmp_path / "consent.toml"
    consent.write_text(f'contact = "{"x" * 200_000}"\n', encoding="utf-8")
    line = one_line_error(invoke("study", "create", "--protocol", "simlex999", "--pairs",
                                 pairs, "--db", database_url(tmp_path / "s.sqlite"),
                                 "--consent", consent), "contact", "200,002 characters")
    assert len(line) < 400


# -- 4. preview links are bound to their study ------------------------------------------------

def test_a_preview_link_opens_only_its_own_study(tmp_path, pairs):
    """Before: the token was the signed row id, so with one key serving two studies, study
    A's link 1 opened study B's preview (its link 1), and revoking it in A did not stop that."""
    app_a = make_app(small_study(tmp_path, pairs, "a"), SECRET_KEY=KEY)
    app_b = make_app(small_study(tmp_path, pairs, "b"), SECRET_KEY=KEY)
    with app_a.extensions["lexgold"].sessions() as session:
        from_a = preview_links.make(session, KEY, m.utcnow(), 2)
    with app_b.extensions["lexgold"].sessions() as session:
        from_b = preview_links.make(session, KEY, m.utcnow(), 2)
    assert from_a.id == from_b.id == 1
    assert app_a.test_client().get(f"/preview/{from_a.token}/1/0").status_code == 200
    assert app_b.test_client().get(f"/preview/{from_b.token}/1/0").status_code == 200
    assert app_b.test_client().get(f"/preview/{from_a.token}/1/0").status_code == 404
    assert app_a.test_client().get(f"/preview/{from_b.token}/1/0").status_code == 404


def test_a_link_names_its_row_not_only_its_id(tmp_path, pairs):
    """A backup restored from before link 1 was made, then a new link 1: the first link's
    token does not open the new row."""
    app = make_app(small_study(tmp_path, pairs), SECRET_KEY=KEY)
    with app.extensions["lexgold"].sessions() as session:
        first = preview_links.make(session, KEY, m.utcnow(), 2)
        session.execute(delete(m.PreviewLink))          # the state of the older backup
        session.commit()
        second = preview_links.make(session, KEY, m.utcnow(), 2)
    assert first.id == second.id
    client = app.test_client()
    assert client.get(f"/preview/{second.token}/1/0").status_code == 200
    assert client.get(f"/preview/{first.token}/1/0").status_code == 404


def test_upgrading_a_study_gives_it_its_own_identity(tmp_path, pairs):
    """Revision 0018 gives a study made before it a random ``uid``; two studies differ."""
    urls = [small_study(tmp_path, pairs, name) for name in ("a", "b")]
    uids = []
    for url in urls:
        engine = make_engine(url)
        downgrade(engine, "0017_machine")
        upgrade(engine)
        with session_factory(engine)() as session:
            uids.append(session.scalar(select(m.Study.uid)))
        engine.dispose()
    assert all(re.fullmatch(r"[0-9a-f]{32}", uid) for uid in uids) and uids[0] != uids[1]


# -- 8. text checks ---------------------------------------------------------------------------

@pytest.mark.parametrize("contact", ["a.researcher@example.org\nclick http://evil.example",
                                     "Dr A \u202egro.elpmaxe@rehcraeser"])
def test_a_consent_contact_with_a_line_break_or_a_bidi_override_is_refused(
        tmp_path, pairs, contact):
    consent = tmp_path / "consent.toml"
    consent.write_text("contact = " + repr(contact).replace("'", '"') + "\n", encoding="utf-8")
    one_line_error(invoke("study", "create", "--protocol", "simlex999", "--pairs", pairs,
                          "--db", database_url(tmp_path / "s.sqlite"), "--consent", consent),
                   "contact", "one line without control or bidi")


@pytest.mark.parametrize("name", ["study\u202eevil", "two\nlines"])
def test_a_study_name_with_a_bidi_override_or_a_line_break_is_refused(tmp_path, pairs, name):
    one_line_error(invoke("study", "create", "--protocol", "simlex999", "--pairs", pairs,
                          "--db", database_url(tmp_path / "s.sqlite"), "--name", name),
                   "field 'name'", "control and bidi")


def test_the_completion_and_screen_out_codes_must_differ(tmp_path, pairs):
    url = database_url(tmp_path / "s.sqlite")
    one_line_error(invoke("study", "create", "--protocol", "simlex999", "--pairs", pairs,
                          "--db", url, "--completion-code", "SAME", "--screenout-code", "SAME"),
                   "screenout-code", "two different codes")
    assert not (tmp_path / "s.sqlite").exists() or \
        "study" not in (tmp_path / "s.sqlite").read_bytes().decode("latin-1")


@pytest.mark.parametrize("word, code", [("\u3164", "U+3164"), ("do\u2800g", "U+2800"),
                                        ("ca\ue000t", "U+E000"), ("\u115f", "U+115F")])
def test_blank_and_private_use_letters_are_refused_with_the_line(tmp_path, word, code):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"word1": ["dog", "cat", word], "word2": ["cat", "mouse", "bird"],
                  "pos": ["N", "N", "N"]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=re.escape(f"pairs.csv:4, field 'word1': holds {code}")):
        read_pair_table(path)
    assert word_problem(word).startswith(f"holds {code}")


def test_an_nfd_spelling_is_the_word_of_its_nfc_one(tmp_path, pairs):
    """Before: ``café`` (NFC) and ``cafe`` + U+0301 (NFD) were two words: a pair listed twice
    in a study, a rating that matched no gold pair. Now every reader keeps NFC."""
    from lexgold.tables import normal_word

    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert normal_word(nfd) == nfc and nfd != nfc
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"word1": [nfc, "dog", nfd], "word2": ["tea", "cat", "tea"],
                  "pos": ["N", "N", "N"]}).to_csv(path, index=False)
    table = read_pair_table(path)
    assert list(table["word1"]) == [nfc, "dog", nfc]
    assert "NFD" in " ".join(table.attrs["notes"])
    one_line_error(invoke("study", "create", "--protocol", "simlex999", "--pairs", path,
                          "--db", database_url(tmp_path / "s.sqlite")),
                   "pairs.csv:4", "pair listed twice")


def test_ratings_files_keep_words_in_nfc(tmp_path):
    from lexgold.ratings.long import read_ratings

    path = tmp_path / "ratings.csv"
    pd.DataFrame({"rater_id": ["r1", "r2"], "tranche": ["1", "1"],
                  "word1": ["caf\u00e9", "cafe\u0301"], "word2": ["tea", "tea"],
                  "rating": ["3", "4"]}).to_csv(path, index=False)
    frame = read_ratings(path)
    assert set(frame["word1"].astype(str)) == {"caf\u00e9"}


def test_line_problem_names_the_character():
    from lexgold.tables import line_problem

    assert line_problem("plain line") is None
    assert line_problem("Dr A\u200dB") is None                      # a joiner is a letter's part
    assert line_problem("a\tb").startswith("holds U+0009")
    assert line_problem("a\u2066b").startswith("holds U+2066 LEFT-TO-RIGHT ISOLATE")


def test_a_builders_checking_sheet_reads_words_by_the_same_rule(tmp_path):
    from lexgold.builder.checking import read_sheets

    sheet = tmp_path / "sheet.csv"
    pd.DataFrame({"word1": ["cafe\u0301", "dog"], "word2": ["tea", "\u3164"], "pos": ["N", "N"],
                  "relation": ["syn", "syn"], "agree": ["yes", "no"]}).to_csv(sheet, index=False)
    with pytest.raises(InputError, match=re.escape("sheet.csv:3, field 'word2': holds U+3164")):
        read_sheets([sheet])
    pd.DataFrame({"word1": ["cafe\u0301"], "word2": ["tea"], "pos": ["N"], "relation": ["syn"],
                  "agree": ["yes"]}).to_csv(sheet, index=False)
    assert list(read_sheets([sheet])["word1"]) == ["caf\u00e9"]
