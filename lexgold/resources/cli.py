"""``lexgold resources``: list the lexical resources found, where, and verify their checksums."""

from __future__ import annotations

import json

import click

from lexgold.cliutil import usf_option, wordnet_option


@click.command()
@usf_option
@click.option("--brysbaert", type=click.Path(), help="Brysbaert et al. 2014 concreteness file "
              "(or its folder); default: the copy shipped with lexgold.")
@wordnet_option
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
def resources(usf_dir, brysbaert, wordnet_dir, as_json):
    """List the resources lexgold finds, where, with checksums verified and a summary.

    Exits with status 1 if a required resource is missing or a checksum does not match.

    \b
    Example:
        lexgold resources --wordnet /usr/share/wordnet
    """
    from lexgold.resources.catalogue import catalogue

    entries = catalogue(usf_dir, brysbaert, wordnet_dir)
    if as_json:
        click.echo(json.dumps(entries, indent=2))
    else:
        for item in entries:
            if not item["found"]:
                click.echo(f"{item['resource']:<24} MISSING  {item['error']}")
                continue
            bad = [f["file"] for f in item.get("files", []) if not f["checksum_ok"]]
            check = ("checksum MISMATCH: " + ", ".join(bad)) if bad else (
                "checksums ok" if item.get("files") else "")
            summary = ", ".join(f"{k}={v}" for k, v in item["summary"].items())
            click.echo(f"{item['resource']:<24} {item['location']}")
            click.echo(f"{'':<24} {summary}  {check}".rstrip())
    failed = [i for i in entries if not i["found"] and not i["optional"]
              or not all(f["checksum_ok"] for f in i.get("files", []))]
    if failed:
        raise SystemExit(1)
