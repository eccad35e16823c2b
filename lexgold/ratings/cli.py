"""``lexgold ratings``: published raw ratings in (``lexgold ratings import``)."""

from __future__ import annotations

from pathlib import Path

import click

from lexgold.cliutil import out_file_option, scale_option
from lexgold.ratings import LAYOUTS


@click.group()
def ratings():
    """Raw ratings in the layouts their authors published them in.

    \b
    Example:
        lexgold ratings import set1.csv set2.csv --scale 0 10 --out ws353.csv
    """


@ratings.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@out_file_option("Long-format ratings CSV to write.")
@click.option("--layout", type=click.Choice(LAYOUTS),
              help="Layout of every file; default: recognised from each file.")
@click.option("--tranche", help="Tranche of one-file-per-rater files (default: the common "
                                "prefix of their names, else 1).")
@scale_option("The sources' rating scale (WordSim-353: 0 10, MEN: 1 7). Checked, and "
              "recorded in the long file so that `lexgold process` rescales onto the "
              "protocol's scale; without it nothing is rescaled.")
@click.option("--map", "map_path", type=click.Path(exists=True, dir_okay=False),
              help="Two-column file, one word a line: FROM TAB TO (or comma, or blank; header "
                   "'from,to' optional). Respells FROM as TO in every file before writing, so "
                   "that files naming the same items in other spellings (MEN's natural and "
                   "lemma forms) rate the same pairs.")
def import_(files, out_path, layout, tranche, scale, map_path):
    """Read raw rating files as distributed and write one long-format ratings CSV.

    Layouts: one column per rater (WordSim-353 set1.csv/set2.csv, .tab), one file per rater
    (MEN's agreement files), ratings without rater identity (SimVerb-3500-ratings.txt; kept
    as anonymous ratings), HyperLex's release hyperlex-all.txt (its trailing ratings, without
    rater identity; POS and TYPE kept), Rare Words' rw.txt, lexgold's long CSV, Potato JSON
    annotations. Released scores that are not ratings (TR9856's TermRelatednessResults,
    SimLex-999.txt) are refused, saying what they are. Prints one line per file: raters, pairs,
    ratings, the scale seen and what was normalised (blanks, non-breaking spaces, trailing
    delimiters, CRLF, pairs listed twice), and a warning when the ratings span less than two
    thirds of the declared scale. Raters of one tranche who share few pairs (files spelling
    the same items differently) are warned about; --map respells.

    \b
    Example:
        lexgold ratings import elias-men-ratings.txt marcos-men-ratings.txt \\
            --scale 1 7 --out men.csv
    """
    from lexgold.ratings.importer import import_ratings, summary
    from lexgold.ratings.long import scale_use
    from lexgold.ratings.overlap import overlap_warnings, read_word_map

    frame, imported = import_ratings(list(files), layout=layout, tranche=tranche,
                                     scale=tuple(scale) if scale else None,
                                     word_map=read_word_map(map_path) if map_path else None)
    for item in imported:
        click.echo(summary(item, tuple(scale) if scale else None))
        for warning in scale_use(item.frame) if scale else []:
            click.echo(f"Warning: {item.path.name}: {warning}", err=True)
    for message in overlap_warnings(frame):
        click.echo(f"Warning: {message}", err=True)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out_path, index=False)
    click.echo(written(frame, out_path))


def written(frame, out_path) -> str:
    """The closing line: ratings, raters (or anonymous ratings), pairs shared by raters."""
    from lexgold.ratings.importer import shared_pairs
    from lexgold.cliutil import plural

    named = frame[~frame["rater_id"].astype(str).str.startswith("?")]
    parts = []
    if len(named):
        parts.append(f"{plural(len(named), 'rating')} by {plural(named['rater_id'].nunique(), 'rater')} "
                     f"({plural(shared_pairs(named), 'pair')} rated by more than one)")
    if len(named) < len(frame):
        parts.append(f"{plural(len(frame) - len(named), 'anonymous rating')}")
    return f"wrote {' and '.join(parts)} to {out_path}"
