"""``lexgold evaluate``, ``lexgold analogy`` and ``lexgold sdt`` (issue #6)."""

import click

from lexgold.cliutil import not_yet_available


@click.command()
@click.option("--gold", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--vectors", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--json", "as_json", is_flag=True)
def evaluate(gold, vectors, as_json):
    """Spearman and Pearson of vector cosines against a gold standard, overall and per subset.

    \b
    Example:
        lexgold evaluate --gold SimLex-999.txt --vectors vectors.txt
    """
    not_yet_available(6)


@click.command()
@click.option("--questions", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--vectors", type=click.Path(exists=True, dir_okay=False), required=True)
@click.option("--json", "as_json", is_flag=True)
def analogy(questions, vectors, as_json):
    """Analogy accuracy per method and category (Linzen 2016).

    \b
    Example:
        lexgold analogy --questions questions-words.txt --vectors vectors.txt
    """
    not_yet_available(6)


@click.command()
@click.option("--corpus", type=click.Path(exists=True), required=True)
def sdt(corpus):
    """Pseudo-synonym same-different test, SDT-rho (Fourtassi & Dupoux 2014).

    \b
    Example:
        lexgold sdt --corpus lee_background.cor
    """
    not_yet_available(6)
