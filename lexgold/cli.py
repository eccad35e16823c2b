"""The ``lexgold`` command line: one group, commands registered from each area's ``cli`` module.

Commands and files of docs/contract.md are a public contract: names and columns do not change.
"""

from __future__ import annotations

import click

from lexgold import __version__
from lexgold.cliutil import LexgoldGroup
from lexgold.resources.cli import resources
from lexgold.builder.cli import build, relations
from lexgold.study.cli import study
from lexgold.annotate.cli import rehearse_command, serve
from lexgold.process.cli import agree, plan, process
from lexgold.crowd.cli import crowd, replay, simulate
from lexgold.ratings.cli import ratings
from lexgold.evaluate.cli import analogy, evaluate, sdt
from lexgold.languages.cli import crosslingual, pack, translate
from lexgold.prolific.cli import prolific
from lexgold.machine.cli import machine
from lexgold.machine.worth_cli import worth


@click.group(cls=LexgoldGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lexgold")
def cli():
    """Build word-pair gold standards the way SimLex-999, HyperLex and TR9856 were built.

    \b
    Example:
        lexgold resources
    """


study.add_command(rehearse_command)    # the site's rehearsal, among the study's commands
machine.add_command(worth)             # what a machine is worth on a pilot
for command in (resources, build, relations, study, serve, ratings, agree, plan, process, replay,
                simulate, crowd, evaluate, analogy, sdt, translate, crosslingual, pack, prolific,
                machine):
    cli.add_command(command)


def main():
    cli(prog_name="lexgold")
