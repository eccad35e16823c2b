"""``lexgold study create`` and ``lexgold serve`` (issue #4)."""

import click

from lexgold.cliutil import not_yet_available


@click.group()
def study():
    """Create and manage rating studies."""


@study.command()
@click.option("--protocol", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--db", help="Database URL (default: SQLite file).")
def create(protocol, pairs, db):
    """Create a study from a protocol file and a pair set.

    \b
    Example:
        lexgold study create --protocol protocols/simlex999.toml --pairs pairs.csv
    """
    not_yet_available(4)


@click.command()
@click.argument("study_name")
def serve(study_name):
    """Serve a study's rating site under a production WSGI server.

    \b
    Example:
        lexgold serve my-study
    """
    not_yet_available(4)
