"""Security round 3, items 8-10 (docs/hardening.md, "Round 3"): data in the release's Markdown,
local paths in a release, one-line errors instead of tracebacks, and the smaller findings."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.process.markdown import code, text
from lexgold.process.pipeline import run
from lexgold.protocols import PACKAGED

HOSTILE = "<img src=x onerror=alert(1)>"


def hostile_release(tmp_path):
    """A plain release whose words, protocol name and paper carry HTML, in a folder whose path
    names the user."""
    home = tmp_path / "home" / "alice" / "secret-project"
    home.mkdir(parents=True)
    protocol = (PACKAGED / "plain.toml").read_text(encoding="utf-8")
    protocol = protocol.replace('name = "plain"', 'name = "<script>alert(2)</script>"').replace(
        'paper = "none', 'paper = "<b onmouseover=alert(3)>x</b> | `tick` none')
    (home / "evil.toml").write_text(protocol, encoding="utf-8")
    rows = [(rater, 1, w1, w2, rating, 0.0, 10.0)
            for rater, shift in (("a", 0), ("b", 1), ("c", -1))
            for w1, w2, rating in ((HOSTILE, "dog|cat", 7 + shift), ("sun", "moon`", 2 + shift))]
    pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating", "scale_min",
                                "scale_max"]).to_csv(home / "ratings.csv", index=False)
    pairs = pd.DataFrame({"word1": [HOSTILE, "sun", "never"], "word2": ["dog|cat", "moon`",
                                                                        "<i>rated</i>"]})
    pairs.to_csv(home / "pairs.csv", index=False)
    report = run(home / "ratings.csv", str(home / "evil.toml"), home / "out", plots=False,
                 bootstrap=0, pairs_path=home / "pairs.csv", allow_incomplete=True)
    return home, report


# -- item 8: Markdown ---------------------------------------------------------------------------

def test_markdown_helpers_escape_html_and_table_cells():
    assert text(HOSTILE) == "&lt;img src=x onerror=alert(1)&gt;"
    assert text("a|b\nc`d*e") == "a\\|b c\\`d\\*e"
    assert code("x`y|z") == "``x`y\\|z``" and code("`") == "`` ` ``"


def test_release_markdown_carries_no_html_from_data(tmp_path):
    home, report = hostile_release(tmp_path)
    for name in ("report.md", "README.md"):
        page = (home / "out" / name).read_text(encoding="utf-8")
        if name == "README.md":       # the YAML header holds data as quoted YAML scalars
            header, page = page.split("\n---\n", 1)
            assert json.dumps("<script>alert(2)</script> gold standard (built with lexgold)") \
                in header
        assert not re.search(r"<(img|script|b|i)\b", page), name
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page, name
    report_md = (home / "out" / "report.md").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in report_md
    assert "dog\\|cat" in report_md                  # one cell, not two
    assert "&lt;i&gt;rated&lt;/i&gt;" in report_md   # the warning names the unrated pair
    card = (home / "out" / "README.md").read_text(encoding="utf-8")
    assert "&lt;b onmouseover=alert(3)&gt;x&lt;/b&gt; \\| \\`tick\\`" in card


def test_release_names_its_inputs_without_local_folders(tmp_path):
    home, report = hostile_release(tmp_path)
    for name in ("report.json", "report.md", "README.md", "datapackage.json"):
        assert "alice" not in (home / "out" / name).read_text(encoding="utf-8"), name
    import hashlib
    digest = hashlib.sha256((home / "ratings.csv").read_bytes()).hexdigest()
    assert report["ratings_file"] == {"name": "ratings.csv", "sha256": digest}
    assert report["pairs_file"]["name"] == "pairs.csv" and report["protocol_file"] == "evil.toml"
