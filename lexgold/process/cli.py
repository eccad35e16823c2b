"""``lexgold agree`` and ``lexgold process`` (issue #5)."""

import click

from lexgold.cliutil import not_yet_available


@click.command()
@click.argument("ratings", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="JSON with keys iaa1, iaa2, raters, pairs.")
def agree(ratings, as_json):
    """Print IAA-1 and IAA-2 of a long-format ratings file.

    \b
    Example:
        lexgold agree ratings.csv --json
    """
    not_yet_available(5)


@click.command()
@click.argument("ratings", type=click.Path(exists=True, dir_okay=False))
@click.option("--protocol", type=click.Choice(["simlex", "hyperlex", "tr9856"]), required=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True)
def process(ratings, protocol, out_dir):
    """Turn raw ratings into a released gold standard with its reliability report.

    \b
    Example:
        lexgold process ratings.csv --protocol simlex --out gold
    """
    not_yet_available(5)
