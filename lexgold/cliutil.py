"""Pieces shared by every lexgold command: common options, written once, and error handling.

A command stays thin (sqlite-utils style): it parses options, calls one library function, and
lets :class:`LexgoldGroup` turn lexgold's input errors into a one-line ``Error: ...``.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import click

from lexgold.errors import InputError, WordNetNotFound, redact

#: errors that are the user's input, reported in one line without a traceback
USER_ERRORS = (InputError, FileNotFoundError, WordNetNotFound, PermissionError, IsADirectoryError)


def plural(n: int, noun: str) -> str:
    """``1 pair``, ``2 pairs``: counts in messages.

    >>> plural(1, "rater"), plural(2, "rater")
    ('1 rater', '2 raters')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class LexgoldGroup(click.Group):
    """A click group that reports bad input as ``Error: <one line>`` and exit status 1."""

    def invoke(self, ctx: click.Context):
        """Every error message, click's own too (``File 'postgresql://u:PW@...' does not
        exist``, raised while a subcommand parses its arguments), goes through
        :func:`lexgold.errors.redact`."""
        try:
            return super().invoke(ctx)
        except click.ClickException as err:
            err.message = redact(err.message)
            raise
        except USER_ERRORS as err:
            message = str(err)
            if isinstance(err, OSError) and err.filename and str(err.filename) not in message:
                message = f"{err.filename}: {err.strerror}"
            raise click.ClickException(redact(message)) from None


def seed_option(function):
    return click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                        help="Seed of the random generator: same seed, same output.")(function)


def usf_option(function):
    return click.option("--usf", "usf_dir", type=click.Path(file_okay=False),
                        help="Folder of USF Appendix A files (A-B.txt ... T-Z.txt); "
                             "default: the copy shipped with lexgold.")(function)


def wordnet_option(function):
    return click.option("--wordnet", "wordnet_dir", type=click.Path(file_okay=False),
                        envvar="LEXGOLD_WORDNET",
                        help="WordNet 3.0 dict folder or NLTK data root "
                             "(env LEXGOLD_WORDNET); default: found automatically.")(function)


def _link_problem(path) -> str:
    return (f"{path} is a symbolic link (to {os.readlink(path)}): lexgold does not write "
            f"through links; remove it")


def refuse_links(ctx, param, value):
    """An output path must not be a symbolic link, nor (a folder) hold one: a link planted
    where lexgold writes (``gold.csv -> ~/.bashrc``) would have its target overwritten. A
    usage error naming the link; parent folders may be links (the user chose the path)."""
    if value is None:
        return value
    links = [value] if os.path.islink(value) else []
    if not links and os.path.isdir(value):
        for folder, folders, files in os.walk(value):          # links are not followed
            links += [os.path.join(folder, n) for n in folders + files
                      if os.path.islink(os.path.join(folder, n))]
            if links:
                break
    if links:
        raise click.BadParameter(_link_problem(links[0]), ctx=ctx, param=param)
    return value


def beside(out, name: str) -> Path:
    """The file ``name`` in the folder of ``out`` (a sidecar: ``simverb.sd.png`` beside
    ``--out simverb.json``), refused like ``--out`` itself (:func:`refuse_links`) when a
    symbolic link is planted there. The one check of every file a command writes beside
    ``--out``.

    Raises
    ------
    InputError
        Naming the link and its target.
    """
    path = Path(out).with_name(name)
    if os.path.islink(path):
        raise InputError(_link_problem(path))
    return path


@contextmanager
def replacing(path, **options):
    """Write ``path`` whole or not at all: a context manager giving a text handle (``open``'s
    ``options``) on a temporary file beside ``path``, renamed over it when the block ends
    without error and removed otherwise. A full disk or any other write error leaves the
    earlier file (or none) in place, never a truncated one, and is one line naming ``path``.
    The rename replaces a symbolic link at ``path`` itself, never its target.

    Raises
    ------
    InputError
        A write error (``No space left on device``), naming ``path``.
    """
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp")
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(handle, 0o666 & ~mask)               # the mode open() would have given
        with os.fdopen(handle, "w", **options) as stream:
            yield stream
        os.replace(temporary, path)
    except OSError as err:
        if isinstance(err, USER_ERRORS):
            raise
        raise InputError(f"not written ({err.strerror or err}); an earlier file there is "
                         f"left as it was", path=path) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def out_option(function):
    """``--out DIR``: the folder a command writes its files into."""
    return click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
                        metavar="DIR", callback=refuse_links,
                        help="Output folder (created if missing).")(function)


def out_file_option(help: str, *, dest: str = "out_path", required: bool = True,
                    aliases: tuple[str, ...] = ()):
    """``--out FILE``: the one file a command writes (``aliases``: older names kept working)."""
    return click.option("--out", *aliases, dest, type=click.Path(dir_okay=False),
                        required=required, metavar="FILE", callback=refuse_links, help=help)


#: what every ``--protocol`` accepts (:func:`lexgold.protocols.protocol_path`)
PROTOCOL_VALUES = ("a packaged name (simlex, hyperlex, tr9856, plain), a shipped language "
                   "pack's <language>/<name> (it/simlex), or the path of a protocol file")


def _check_protocol(ctx, param, value):
    """The protocol named by ``--protocol`` must exist: a usage error naming the option."""
    if value is None:
        return value
    from lexgold.errors import InputError
    from lexgold.protocols import protocol_path

    try:
        protocol_path(value)
    except InputError as err:
        raise click.BadParameter(str(err), ctx=ctx, param=param) from None
    return value


def protocol_option(use: str, *, default: str | None = None, required: bool = False):
    """``--protocol NAME|FILE``, the same values and check in every command; ``use`` says what
    the command takes from it."""
    return click.option("--protocol", default=default, required=required,
                        show_default=default is not None, metavar="NAME|FILE",
                        callback=_check_protocol,
                        help=f"Protocol: {PROTOCOL_VALUES}. {use}")


def machine_options(dest: str, help: str):
    """``--machine FILE`` (a machine's ratings; ``help`` says what the command does with them)
    and ``--machine-column``, the same in every command that takes a machine."""
    def decorate(command):
        command = click.option(
            "--machine-column", default=None,
            help="The column of --machine holding the number (default: the one its "
                 "provenance sidecar names, else the one numeric column).")(command)
        return click.option("--machine", dest, type=click.Path(exists=True, dir_okay=False),
                            help=help)(command)
    return decorate


#: the most resamples ``--bootstrap`` takes: ten times what a 95 % interval's third digit needs,
#: so that a typing slip cannot hold a machine for hours
MAX_BOOTSTRAP = 100_000


def bootstrap_option(dest: str, default: int | None, help: str):
    """``--bootstrap N``: resamples for confidence intervals; 0 means none, negative or above
    :data:`MAX_BOOTSTRAP` is refused."""
    return click.option("--bootstrap", dest, type=click.IntRange(min=0, max=MAX_BOOTSTRAP),
                        default=default,
                        show_default=default is not None, help=help)


class FiniteRange(click.FloatRange):
    """:class:`click.FloatRange` that also refuses ``nan``, ``inf`` and ``-inf`` (``nan`` passes
    every comparison of a range unnoticed): a usage error naming the option."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


#: the largest ``|MIN|`` and ``|MAX|`` of a ``--scale``: rating scales run over tens or
#: hundreds of points (a 0-100 slider); a wider one is a typing error
SCALE_BOUND = 1e6


def _check_scale(ctx, param, value):
    """``--scale MIN MAX`` must be finite and within :data:`SCALE_BOUND` of 0, with MIN below
    MAX: a usage error naming the option."""
    if value and not (-SCALE_BOUND <= value[0] < value[1] <= SCALE_BOUND):
        raise click.BadParameter(f"MIN must be below MAX, both finite and within "
                                 f"{-SCALE_BOUND:,.0f}..{SCALE_BOUND:,.0f}; given {value[0]:g} "
                                 f"{value[1]:g}", ctx=ctx, param=param)
    return value


def scale_option(help: str):
    """``--scale MIN MAX``: a rating scale, the same check in every command that takes one."""
    return click.option("--scale", nargs=2, type=float, metavar="MIN MAX",
                        callback=_check_scale, help=help)


STUDY_HELP = "Study database: a SQLite file path or a database URL (postgresql+psycopg://...)."


def study_target(default: str = "study.sqlite"):
    """A new study's database, given as ``STUDY`` like every other ``lexgold study`` command
    takes it, or as ``--db STUDY`` (the name docs/contract.md's scripts use); passed to the
    command as ``db``."""
    def decorate(function):
        @functools.wraps(function)
        def command(*args, study_positional=None, db_option=None, **kwargs):
            if study_positional is not None and db_option is not None \
                    and study_positional != db_option:
                raise click.UsageError("give the study once: STUDY or --db, not both")
            return function(*args, db=study_positional or db_option or default, **kwargs)

        command = click.option("--db", "db_option", metavar="STUDY",
                               help=f"Same as STUDY (default: {default}). {STUDY_HELP}")(command)
        return click.argument("study_positional", metavar="[STUDY]", required=False)(command)
    return decorate


def crowd_options(function):
    """The simulated crowd of ``lexgold simulate`` and ``lexgold study rehearse``
    (:class:`lexgold.crowd.simulate.Crowd`), passed to the command as keyword arguments."""
    options = [
        click.option("--crowd", "model", default="default", show_default=True,
                     metavar="CROWD",
                     help="The rater model: default (fitted to SimVerb-3500's and "
                          "WordSim-353's raw ratings); simverb, wordsim353, danish or card660 "
                          "(each fitted to that shipped log alone: SimVerb-3500, WordSim-353 "
                          "set 1, the Danish similarity set, Card-660); invented (lexgold's "
                          "earlier crowd: uniform true scores, normal bias and noise); or a "
                          "crowd JSON written by `lexgold crowd fit`."),
        click.option("--spammers", type=FiniteRange(0, 1), default=None,
                     help="Share of spamming raters (random, one value, or two alternating); "
                          "default: a fitted crowd's own (a shipped log's or a crowd JSON's: "
                          "the share its fit found, none for a log that shows none), 0.1 for "
                          "the default and the invented crowd."),
        click.option("--noise-sd", type=FiniteRange(min=0), default=None,
                     help="With --crowd invented: SD of an honest rater's noise around the "
                          "true score (default 1.0)."),
        click.option("--bias-sd", type=FiniteRange(min=0), default=None,
                     help="With --crowd invented: SD of the raters' personal biases "
                          "(default 0.7)."),
        click.option("--recall", type=FiniteRange(0, 1), default=0.995, show_default=True,
                     help="Chance that an honest rater repeats its first answer to a pair "
                          "shown again."),
        click.option("--quitters", type=FiniteRange(0, 1), default=0.0, show_default=True,
                     help="Share of honest raters who close the page after a random 10-90 % "
                          "of their pages."),
        click.option("--seconds-per-pair", type=FiniteRange(min=0.1), default=6.0,
                     show_default=True,
                     help="An honest rater's average time per pair (spammers: a third)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def quiet_option(function):
    """``--quiet``: no progress bar. A bar (tqdm, on stderr) is shown only when stderr is a
    terminal, so a pipe, a log file or a test sees the command's own lines alone."""
    return click.option("--quiet", is_flag=True,
                        help="No progress bar (one is shown on stderr only when it is a "
                             "terminal).")(function)


def progress_bar(quiet: bool = False, **options):
    """A tqdm bar on stderr for work of more than a few seconds: disabled by ``quiet`` and
    when stderr is not a terminal (tqdm's ``disable=None``); erased when done (``leave``)."""
    from tqdm import tqdm

    options.setdefault("leave", False)
    return tqdm(file=sys.stderr, disable=True if quiet else None, **options)


class Stages:
    """Progress over the named stages of a command (``lexgold process``): a bar of
    ``len(names)`` steps: "stage 3/6 [00:12, agreement]", the number and name of the stage
    running now, the elapsed time ticking (a stage can take tens of seconds). Called with a
    stage's name when it starts. Use as a context manager; ``quiet`` as
    :func:`progress_bar`."""

    def __init__(self, names, *, desc: str, quiet: bool = False):
        self.names = list(names)
        self.bar = progress_bar(quiet, total=len(self.names), desc=desc, unit="stage",
                                bar_format="{desc}: stage {n_fmt}/{total_fmt} "
                                           "[{elapsed}{postfix}]")
        self._ticking = ticking(self.bar)

    def __call__(self, name: str) -> None:
        number = self.names.index(name) + 1 if name in self.names else self.bar.n
        self.bar.set_postfix_str(name, refresh=False)
        self.bar.update(number - self.bar.n)
        self.bar.refresh()

    def __enter__(self):
        self._ticking.__enter__()
        return self

    def __exit__(self, *exc):
        self._ticking.__exit__(*exc)


def working(desc: str, *, quiet: bool = False):
    """A context manager showing ``desc`` and the time elapsed, refreshed every second, while
    a command whose library call reports no progress runs (``build``, ``crosslingual``)."""
    return ticking(progress_bar(quiet, total=None, desc=desc, bar_format="{desc} [{elapsed}]"))


def ticking(bar):
    """A context manager that refreshes ``bar`` every second from a daemon thread (its elapsed
    time and ETA go on between updates) and closes it at the end; gives the bar."""
    return _Ticking(bar)


class _Ticking:
    def __init__(self, bar, every: float = 1.0):
        self.bar, self.every = bar, every
        self._stop = threading.Event()
        self._thread = None

    def _run(self):
        while not self._stop.wait(self.every):
            self.bar.refresh()

    def __enter__(self):
        if not self.bar.disable:
            self.bar.refresh()
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self.bar

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.bar.close()
