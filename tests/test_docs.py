"""The documents are executed (issue 34): every command block of README.md, docs/*.md and
deploy/README.md runs as written, in order, in a temporary folder per document, and the outputs
the documents quote are checked (:mod:`docrunner`, which describes the markers a document uses
for blocks that cannot run in CI, hidden set-up and size knobs).

The documents' walk-throughs take minutes (the quickstart builds three candidate sets and
rehearses a study): they carry the ``docs`` mark, and with it ``slow`` (tests/conftest.py);
``pytest -m "not slow"`` is the fast tier.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from docrunner import (blocks, click_problem, commands, lexgold_invocations,  # noqa: E402
                       output_matches, run_document)

ROOT = Path(__file__).resolve().parents[1]
#: every document: the README, the deployment guide and every guide in docs/
DOCUMENTS = [ROOT / "README.md", ROOT / "deploy" / "README.md",
             *sorted((ROOT / "docs").glob("*.md"))]

#: documents whose commands are relative to the clone (bash scripts/quickstart.sh, python
#: bench/load_test.py): they run in it; every other document's in an empty folder
IN_CHECKOUT = (ROOT / "README.md", ROOT / "deploy" / "README.md", ROOT / "docs" / "hardening.md")


def environment(tmp_path: Path) -> dict[str, str]:
    """The reader's shell: lexgold on PATH (the virtual environment the tests run in), the
    quickstart's output in the temporary folder (its documented LEXGOLD_QUICKSTART_OUT)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["LEXGOLD_QUICKSTART_OUT"] = str(tmp_path / "quickstart-out")
    env.pop("PYTHONPATH", None) if env.get("PYTHONPATH") == "" else None
    return env


@contextlib.contextmanager
def machine_endpoint(document: Path):
    """docs/machine.md rates pairs with a model: a fake chat-completions server on loopback
    (bench/chat_fake.py) is the endpoint its reader exports (``LEXGOLD_MACHINE_ENDPOINT``)."""
    if document.name != "machine.md":
        yield {}
        return
    sys.path.insert(0, str(ROOT / "bench"))
    from chat_fake import FakeChat

    with FakeChat() as fake:
        yield {"LEXGOLD_MACHINE_ENDPOINT": fake.url}


@pytest.mark.docs
@pytest.mark.timeout(2400)          # a walk-through rehearses a study: minutes, not seconds
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_document_runs_as_written(document, tmp_path, monkeypatch):
    folder = ROOT if document in IN_CHECKOUT else tmp_path
    monkeypatch.delenv("LEXGOLD_MACHINE_API_KEY", raising=False)
    with machine_endpoint(document) as extra:
        counts = run_document(document, folder, {**environment(tmp_path), **extra})
    runnable = [b for b in blocks(document) if b.language in ("bash", "sh", "shell")]
    assert counts["run"] + len(counts["skipped"]) == len(runnable), counts


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_says_what_it_is(document):
    # a command cannot hide from the runner in an unlabelled block or behind a prompt: every
    # fenced block names its language (bash/sh for commands, text for output and synopses), and
    # a skipped block says why
    for block in blocks(document):
        where = f"{document.name}:{block.line}"
        assert block.language, f"{where}: a fenced block without a language (bash, text, ...)"
        assert block.language != "console", f"{where}: commands go in bash blocks, output after"
        if block.marker("skip") is not None:
            assert block.marker("skip").strip(), f"{where}: a skipped block must say why"
    # a marker belongs to the block right after it: one with prose in between would be dropped
    lines = document.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("<!--") and "doc-test:" in line:
            end = next(j for j in range(i, len(lines)) if "-->" in lines[j])
            after = lines[end + 1].lstrip() if end + 1 < len(lines) else ""
            assert after.startswith(("```", "~~~", "<!--")), \
                f"{document.name}:{i + 1}: a doc-test marker must come right before its block"


def skipped_invocations(document: Path) -> list[tuple[str, list[str]]]:
    """``(where, words)`` of every ``lexgold ...`` command in the document's skipped blocks."""
    where = document.relative_to(ROOT)
    return [(f"{where}:{block.line}", words) for block in blocks(document)
            if block.language in ("bash", "sh", "shell") and block.marker("skip") is not None
            for command in commands(block.text) for words in lexgold_invocations(command)]


def test_every_lexgold_command_of_a_skipped_block_still_parses():
    """A block the runner skips (a paid platform, a server, minutes of work) is not run, but
    its ``lexgold`` commands are parsed as click would parse them: a renamed command or option,
    or one that lost its value, fails here, in the fast tier."""
    from lexgold.cli import cli

    found = [item for document in DOCUMENTS for item in skipped_invocations(document)]
    calls = re.compile(r"(?:^|[;&|(']\s*)(?:[A-Z_]+=\S+\s+)*(?:\S*/)?lexgold\s+[a-z]", re.M)
    skipped = {f"{document.relative_to(ROOT)}:{block.line}" for document in DOCUMENTS
               for block in blocks(document) if block.marker("skip") is not None
               and block.language in ("bash", "sh", "shell") and calls.search(block.text)}
    assert {where for where, _ in found} == skipped     # each block's commands were found
    problems = [f"{where}: {problem}" for where, words in found
                if (problem := click_problem(cli, words))]
    assert problems == []


def test_a_renamed_option_or_command_in_a_skipped_block_is_found():
    from lexgold.cli import cli

    assert lexgold_invocations("OUT=x lexgold process r.csv --out \"$OUT\" && ls | wc  # a note") \
        == [["process", "r.csv", "--out", "$OUT"]]
    assert lexgold_invocations("echo $(lexgold resources --json) | jq .") == [["resources", "--json"]]
    assert lexgold_invocations("sed s/a/b/ f > /etc/lexgold; lexgold study pause s 2>&1") \
        == [["study", "pause", "s"]]
    assert lexgold_invocations("su x -s /bin/sh -c '/v/bin/lexgold serve --port 8 \\\n  --workers 4'") \
        == [["serve", "--port", "8", "--workers", "4"]]
    (where, words), *_ = [item for document in DOCUMENTS for item in skipped_invocations(document)
                          if any(w.startswith("--") for w in item[1][1:])]
    assert click_problem(cli, words) is None, where
    option = next(w for w in words if w.startswith("--"))
    renamed = [option + "x" if w == option else w for w in words]
    assert f"No such option '{option}x'" in click_problem(cli, renamed)
    assert click_problem(cli, ["process", "r.csv", "--out"]) == \
        "lexgold process: Option '--out' requires an argument."
    assert click_problem(cli, ["study", "rehersal", "s.sqlite"]) == \
        "lexgold study: no such command 'rehersal'"
    assert click_problem(cli, ["resources", "extra"]) == \
        "lexgold resources: unexpected extra argument 'extra'"
    assert click_problem(cli, ["study", "rehearse", "s.sqlite", "--max-raters", "30"]) is None
    assert click_problem(cli, ["process", "--help"]) is None


# -- the runner itself, on hand-made documents --------------------------------------------------

def test_blocks_markers_and_commands(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("Intro\n\n<!-- doc-test: skip: needs a Prolific account -->\n```bash\n"
                   "lexgold prolific sync x\n```\n\n```bash\necho one \\\n  two\n"
                   "for i in 1 2; do\n  echo $i\ndone\nfalse  # refused: on purpose\n```\n"
                   "<!-- doc-test: output -->\n```\none two\n1\n...\n```\n")
    found = blocks(doc)
    assert [b.marker("skip") for b in found] == ["needs a Prolific account", None, None]
    assert [b.runs for b in found] == [False, True, False]
    assert commands(found[1].text) == ["echo one \\\n  two", "for i in 1 2; do\n  echo $i\ndone",
                                       "false  # refused: on purpose"]
    counts = run_document(doc, tmp_path, dict(os.environ), log=lambda *_: None)
    assert counts["run"] == 1 and counts["outputs"] == 1 and counts["commands"] == 3
    assert counts["skipped"] == [(4, "needs a Prolific account")]


def test_a_failing_command_or_a_wrong_quote_fails_the_document(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\necho fine\nls no-such-file\n```\n")
    with pytest.raises(AssertionError, match=r"doc.md:1: exit 2: ls no-such-file"):
        run_document(doc, tmp_path, dict(os.environ), log=lambda *_: None)
    doc.write_text("```bash\necho 'IAA-1 0.735'\n```\n<!-- doc-test: output -->\n```\n"
                   "IAA-1 0.736\n```\n")
    with pytest.raises(AssertionError, match="the doc quotes 'IAA-1 0.736'"):
        run_document(doc, tmp_path, dict(os.environ), log=lambda *_: None)
    doc.write_text("```bash\ntrue  # refused: but it is not\n```\n")
    with pytest.raises(AssertionError, match="expected to be refused"):
        run_document(doc, tmp_path, dict(os.environ), log=lambda *_: None)


def test_output_matching_rules():
    printed = "rehearsal of out/study.sqlite: 520 raters entered\nplaces: 520\nIAA-1 0.630\n"
    assert output_matches("rehearsal of ...: 520 raters entered\nIAA-1  0.630", printed) is None
    assert output_matches("IAA-1 0.630\nplaces: 520", printed) == "places: 520"   # order
    assert output_matches("...\nIAA-1 0.63", printed) == "IAA-1 0.63"            # whole line
