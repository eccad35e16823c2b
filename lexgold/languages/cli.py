"""``lexgold translate export|import`` (issue #8)."""

import click

from lexgold.cliutil import not_yet_available


@click.group()
def translate():
    """Translation workflow for a new-language version of a gold standard."""


@translate.command("export")
@click.option("--pairs", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--lang", required=True, help="Target language code, e.g. it.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True)
def export_sheets(pairs, lang, out_dir):
    """Write sheets for two independent translators.

    \b
    Example:
        lexgold translate export --pairs pairs.csv --lang it --out sheets
    """
    not_yet_available(8)


@translate.command("import")
@click.argument("sheets", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True)
def import_sheets(sheets, out_dir):
    """Read translators' sheets back, report agreement, write the adjudication sheet.

    \b
    Example:
        lexgold translate import sheets/it_a.csv sheets/it_b.csv --out it
    """
    not_yet_available(8)
