"""Start-up cost of the command line (issue 22 item 5): heavy modules load where they are used."""

import subprocess
import sys

HEAVY = ("nltk", "scipy", "pandas", "sqlalchemy", "flask")


def test_importing_the_cli_imports_no_heavy_module():
    code = ("import sys, lexgold.cli; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == ""


def test_wordnet_not_found_keeps_its_old_name():
    from lexgold.errors import WordNetNotFound
    from lexgold.resources.wordnet import WordNetNotFound as old

    assert old is WordNetNotFound and issubclass(WordNetNotFound, FileNotFoundError)


def test_choices_offered_by_the_cli_are_the_modules_own():
    from lexgold.evaluate import vectors
    from lexgold.languages import translation
    from lexgold.ratings import layouts

    assert vectors.CASE_POLICIES[0] == vectors.DEFAULT_CASE
    assert set(translation.QUESTIONS) == {"simlex", "hyperlex", "tr9856"}
    assert "long" in layouts.LAYOUTS
