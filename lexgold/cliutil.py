"""Pieces shared by every lexgold command: common options, written once, and error handling.

A command stays thin (sqlite-utils style): it parses options, calls one library function, and
lets :class:`LexgoldGroup` turn lexgold's input errors into a one-line ``Error: ...``.
"""

from __future__ import annotations

import click

from lexgold.errors import InputError, WordNetNotFound

#: errors that are the user's input, reported in one line without a traceback
USER_ERRORS = (InputError, FileNotFoundError, WordNetNotFound, PermissionError, IsADirectoryError)


class LexgoldGroup(click.Group):
    """A click group that reports bad input as ``Error: <one line>`` and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except USER_ERRORS as err:
            message = str(err)
            if isinstance(err, OSError) and err.filename and str(err.filename) not in message:
                message = f"{err.filename}: {err.strerror}"
            raise click.ClickException(message) from None


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


def out_option(function):
    return click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
                        help="Output folder (created if missing).")(function)


def crowd_options(function):
    """The simulated crowd of ``lexgold simulate`` and ``lexgold study rehearse``
    (:class:`lexgold.process.simulate.Crowd`), passed to the command as keyword arguments."""
    options = [
        click.option("--spammers", type=click.FloatRange(0, 1), default=0.1, show_default=True,
                     help="Share of spamming raters (random, one value, or two alternating)."),
        click.option("--noise-sd", type=click.FloatRange(min=0), default=1.0, show_default=True,
                     help="SD of an honest rater's noise around the true score."),
        click.option("--bias-sd", type=click.FloatRange(min=0), default=0.7, show_default=True,
                     help="SD of the raters' personal biases."),
        click.option("--recall", type=click.FloatRange(0, 1), default=0.995, show_default=True,
                     help="Chance that an honest rater repeats its first answer to a pair "
                          "shown again."),
        click.option("--quitters", type=click.FloatRange(0, 1), default=0.0, show_default=True,
                     help="Share of honest raters who close the page after a random 10-90 %% "
                          "of their pages."),
        click.option("--seconds-per-pair", type=click.FloatRange(min=0.1), default=6.0,
                     show_default=True,
                     help="An honest rater's average time per pair (spammers: a third)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function
