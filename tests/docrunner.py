"""Run the commands of a Markdown document as written, in order, and check the outputs it quotes.

The documents are the user's instructions, so the test suite follows them word for word
(issue 34): every fenced ``bash``/``sh`` block is run in one temporary folder per document, each
complete shell command on its own, in one bash process (a ``cd`` or a variable carries over, as
in the reader's terminal). A command must succeed, unless its own comment says it is refused
(``# refused: ...`` or ``# fails: ...``), then it must fail.

What a reader does not see steers the run, as HTML comments (GitHub and Hugging Face hide them)
directly before a block:

``<!-- doc-test: skip: REASON -->``
    the block is not run in CI, for the reason given (a command that needs a human, a paid
    platform or a file that cannot be shipped); the reason is required;
``<!-- doc-test: output -->``
    the block is what the previous run block printed (stdout and stderr together): each of its
    lines must appear in that output, in order (other lines may come between); ``...`` inside a
    line stands for any text, a line of only ``...`` for nothing in particular;
``<!-- doc-test: setup`` ... ``-->``
    commands the reader is assumed to have run (files they already have); run before the next
    block, in the same folder;
``<!-- doc-test: env NAME=VALUE ... -->``
    environment for the blocks after it: only the documented size knobs.

A command that serves (``lexgold serve`` without ``--check``) runs in the background until its
port answers; a rater then opens the study's entry page, and the server is stopped.

A skipped block still has its ``lexgold`` commands checked (:func:`lexgold_invocations`,
:func:`click_problem`): click must know each command and option, so a renamed one fails the
fast tier even where the block cannot run.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

RUN_LANGUAGES = ("bash", "sh", "shell")
_MARKER = re.compile(r"<!--\s*doc-test:\s*(\w+)(.*?)-->", re.S)
_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
_STATUS = "__doc_test_status__"


@dataclass
class Block:
    """One fenced block of a document and the markers before it."""
    line: int                      # the line of its opening fence (1-based)
    language: str
    text: str
    markers: list[tuple[str, str]] = field(default_factory=list)

    def marker(self, name: str) -> str | None:
        return next((value for kind, value in self.markers if kind == name), None)

    @property
    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES and self.marker("skip") is None \
            and self.marker("output") is None


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, each with the doc-test markers that precede it."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found, pending, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("<!--") and "doc-test:" in line:
            j = i
            while "-->" not in lines[j]:
                j += 1
            comment = "\n".join(lines[i:j + 1])
            for kind, value in _MARKER.findall(comment):
                pending.append((kind, value.strip().lstrip(":").strip()))
            i = j + 1
            continue
        fence = _FENCE.match(line.lstrip())
        if fence:
            indent = len(line) - len(line.lstrip())
            close, j = fence.group(1), i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(close):
                j += 1
            body = "\n".join(text[indent:] if text[:indent].strip() == "" else text
                             for text in lines[i + 1:j])
            found.append(Block(i + 1, fence.group(2).lower(), body, pending))
            pending, i = [], j + 1
            continue
        if line.strip() and pending and not any(k in ("env",) for k, _ in pending):
            pending = []                   # a marker belongs to the block right after it
        i += 1
    return found


def commands(text: str) -> list[str]:
    """The complete shell commands of a block, in order (a command spans lines while bash's
    parser says it is incomplete: continuation lines, loops, quotes)."""
    result, current = [], []
    for line in text.split("\n"):
        current.append(line)
        candidate = "\n".join(current)
        if not candidate.strip() or candidate.strip().startswith("#") and len(current) == 1:
            current = []
            continue
        if line.rstrip().endswith("\\"):
            continue
        check = subprocess.run(["bash", "-n", "-c", candidate], capture_output=True)
        if check.returncode == 0:
            result.append(candidate)
            current = []
    if current and "\n".join(current).strip():
        result.append("\n".join(current))
    return result


def expected_to_fail(command: str) -> bool:
    """A command whose own comment says it is refused (``# refused: ...``)."""
    comment = command.split("\n")[0].partition(" #")[2].strip().lower()
    return comment.startswith(("refused", "fails"))


def serves(command: str) -> int | None:
    """The port of a ``lexgold serve`` command that serves until stopped (not ``--check``)."""
    words = shlex.split(command.split(" #")[0], posix=True)
    if "lexgold" not in words or "serve" not in words or "--check" in words:
        return None
    if "--port" in words:
        return int(words[words.index("--port") + 1])
    return 8000                    # lexgold serve's default


def output_matches(expected: str, output: str) -> str | None:
    """None when every line of ``expected`` appears in ``output`` in order, else the first
    line that does not (``...`` in a line: any text; a line of ``...``: skipped)."""
    have = [" ".join(line.split()) for line in output.splitlines()]
    at = 0
    for line in expected.splitlines():
        want = " ".join(line.split())
        if not want or want == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        while at < len(have) and not pattern.fullmatch(have[at]):
            at += 1
        if at == len(have):
            return line
        at += 1
    return None


@dataclass
class Result:
    command: str
    status: int
    output: str


class Shell:
    """One bash process per document: commands run in it one at a time, in ``folder``."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env = folder, env
        self.process = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=folder, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)

    def run(self, command: str, timeout: float) -> Result:
        """Run ``command`` as the reader would type it; its status and output (2>&1)."""
        script = f"{{\n{command}\n}} 2>&1; echo \"{_STATUS} $?\"\n"
        self.process.stdin.write(script)
        self.process.stdin.flush()
        lines, deadline = [], time.monotonic() + timeout
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"the shell ended during: {command}\n{''.join(lines)}")
            if line.startswith(_STATUS):
                return Result(command, int(line.split()[1]), "".join(lines))
            lines.append(line)
            if time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"over {timeout:.0f} s: {command}\n{''.join(lines)}")

    def export(self, assignments: str) -> None:
        for name, value in (item.split("=", 1) for item in shlex.split(assignments)):
            self.run(f"export {name}={shlex.quote(value)}", 10)

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def serve_and_enter(command: str, port: int, folder: Path, env: dict, timeout: float) -> str:
    """Start a serving command as written, in the background; when its port answers, a rater
    opens the entry page (``/?PROLIFIC_PID=...``); stop it. Returns what it printed and the
    page's status line."""
    server = subprocess.Popen(["bash", "-c", command], cwd=folder, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline, page = time.monotonic() + timeout, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                # a link as Prolific makes it (24 hex digits each), so that a --strict-ids
                # study takes it too
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/?PROLIFIC_PID="
                                            f"5f0c1a2b3c4d5e6f7a8b9c0d&STUDY_ID={'0' * 24}"
                                            f"&SESSION_ID={'d0c7e57' + '0' * 17}",
                                            timeout=5) as answer:
                    page = f"{answer.status} {answer.read().decode('utf-8', 'replace')}"
                break
            except urllib.error.HTTPError as refused:     # served, but the page was refused
                page = f"{refused.code} {refused.read().decode('utf-8', 'replace')}"
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        if page is None:
            raise AssertionError(f"the study was not served on port {port}: {command}")
        return page
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


def run_document(path: Path, folder: Path, env: dict[str, str], *, timeout: float = 1800,
                 log=print) -> dict:
    """Run every block of ``path`` (module docstring) in ``folder``; raise AssertionError on the
    first command that fails (or succeeds where its comment says it is refused) and on the
    first quoted output that does not match. Returns counts: blocks run, skipped (with their
    reasons), outputs checked, commands run."""
    shell = Shell(folder, env)
    counts = {"run": 0, "skipped": [], "outputs": 0, "commands": 0, "served": 0}
    last: list[Result] = []
    try:
        for block in blocks(path):
            where = f"{path.name}:{block.line}"
            for kind, value in block.markers:
                if kind == "env":
                    shell.export(value)
                elif kind == "setup":
                    for command in commands(value):
                        result = shell.run(command, timeout)
                        assert result.status == 0, f"{where}: hidden setup failed: {command}\n" \
                                                   f"{result.output}"
            if block.marker("skip") is not None:
                assert block.marker("skip"), f"{where}: a skipped block must say why"
                counts["skipped"].append((block.line, block.marker("skip")))
                continue
            if block.marker("output") is not None:
                printed = "".join(r.output for r in last)
                missing = output_matches(block.text, printed)
                assert missing is None, (f"{where}: the doc quotes {missing!r}, not in what the "
                                         f"commands printed:\n{printed}")
                counts["outputs"] += 1
                continue
            if not block.runs:
                continue
            counts["run"] += 1
            last = []
            for command in commands(block.text):
                port = serves(command)
                log(f"$ {command}")
                if port is not None:
                    here = _shell_env(shell, env)
                    page = serve_and_enter(command, port, Path(here["PWD"]), here, 120)
                    assert page.startswith("200"), f"{where}: the entry page answered {page[:200]}"
                    counts["served"] += 1
                    continue
                result = shell.run(command, timeout)
                log(result.output.rstrip())
                counts["commands"] += 1
                if expected_to_fail(command):
                    assert result.status != 0, f"{where}: expected to be refused: {command}"
                else:
                    assert result.status == 0, (f"{where}: exit {result.status}: {command}\n"
                                                f"{result.output}")
                last.append(result)
    finally:
        shell.close()
    return counts


def _shell_env(shell: Shell, env: dict) -> dict:
    """The document shell's current environment (exports made by earlier blocks, its folder)."""
    printed = shell.run("env -0 | base64 -w0; echo", 10).output.strip()
    pairs = base64.b64decode(printed).split(b"\0")
    return {**env, **dict(p.decode().split("=", 1) for p in pairs if b"=" in p)}


_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "$(", "`", "|&", ";;"}


def lexgold_invocations(command: str) -> list[list[str]]:
    """The argument lists of the ``lexgold ...`` commands in one shell command (after ``&&``,
    ``|``, ``;``, inside ``$(...)``, behind ``NAME=value`` assignments; comments dropped)."""
    text = re.sub(r"(?<=\s)\d+(?=[<>])", "", command.replace("\\\n", " "))    # 2>&1: >&1
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, "#"
    words, found, target = [], [], False
    for token in list(lexer) + [";"]:
        if set(token) <= set("<>&") and set(token) & set("<>"):
            target = True                              # a redirection: its file is no word
        elif token in _SEPARATORS or set(token) <= set("&|;()"):
            if words:
                found.append(words)
            words, target = [], False
        elif target:
            target = False
        else:
            words.append(token)
    out = []
    for words in found:
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]                          # NAME=value lexgold ...
        if words and Path(words[0]).name == "lexgold":
            out.append(words[1:])
        else:                                          # sh -c '... lexgold ...', su -c
            for word in words[1:]:
                if " " in word and "lexgold" in word:
                    out.extend(lexgold_invocations(word))
    return out


def click_problem(root, words: list[str], name: str = "lexgold") -> str | None:
    """Why click would refuse ``lexgold WORDS`` before doing anything (an unknown command or
    option, an option without its value, an extra argument), or None. Only the words are
    parsed: no value is converted and no file looked at, so a command that needs a study or a
    server still parses."""
    import click

    command, ctx, path = root, None, name
    while True:
        ctx = click.Context(command, info_name=path.split()[-1], parent=ctx,
                            resilient_parsing=False)
        parser = command.make_parser(ctx)
        try:
            opts, args, _ = parser.parse_args(list(words))
        except click.UsageError as err:
            return f"{path}: {err.format_message()}"
        if any(key in opts for key in ("help", "version")) or any(
                opts.get(p.name) for p in command.params if getattr(p, "is_eager", False)):
            return None
        if not isinstance(command, click.Group):
            if args and not ctx.allow_extra_args:
                return f"{path}: unexpected extra argument {args[0]!r}"
            return None
        if not args:
            return None                                # a group alone prints its help
        sub = command.get_command(ctx, args[0])
        if sub is None:
            return f"{path}: no such command {args[0]!r}"
        command, path, words = sub, f"{path} {args[0]}", args[1:]
