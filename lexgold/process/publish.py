"""What goes beside a released gold standard so others can cite, check and load it.

- ``README.md``: a dataset card, with the YAML header of the Hugging Face dataset-card
  convention and a datasheet (Gebru et al. 2021, "Datasheets for Datasets": motivation,
  composition, collection, preprocessing, agreement, uses, distribution, maintenance) filled
  from the run's report; what only the authors know comes from ``[process.release]``
  (``recruitment``, ``biases``, ``license``, ...), and one they did not state reads "not
  stated" (``lexgold process`` names those keys);
- ``CITATION.cff``: Citation File Format 1.2.0, citing the protocol's paper;
- ``datapackage.json``: a Frictionless Data Package describing the tables (``frictionless
  validate datapackage.json`` checks them, their sizes and SHA-256 hashes);
- ``croissant.json``: the same folder in MLCommons Croissant 1.1 with its Responsible-AI fields
  (:mod:`lexgold.process.croissant`);
- ``SHA256SUMS``: ``sha256sum -c`` format over every other file of the folder.

Everything is computed from the report and the files, never from the clock: the same run gives
the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from lexgold import __version__
from lexgold.compression import sha256_file
from lexgold.errors import InputError
from lexgold.process.croissant import USES, date_published, write_croissant
from lexgold.process.markdown import code, text
from lexgold.process.run_report import BwsReport, ProcessReport, cites_paper, following
from lexgold.protocols.release import NOT_STATED
from lexgold.process.machine_mode import card_lines
from lexgold.process.simulated_label import banner, statement

#: the dataset kind of each release format, for the card's tags
KINDS = {"simlex": "word-similarity", "hyperlex": "lexical-entailment",
         "tr9856": "term-relatedness"}


def write_publication(out: Path, report: ProcessReport, gold: pd.DataFrame,
                      protocol: dict | None = None) -> list[str]:
    """Write ``README.md``, ``CITATION.cff``, ``datapackage.json`` and ``croissant.json`` into
    ``out``; return their names. ``protocol`` (the loaded protocol) fills Croissant's
    collection fields. Call :func:`write_checksums` after every other file is written."""
    out = Path(out)
    (out / "README.md").write_text(dataset_card(report, gold), encoding="utf-8")
    (out / "CITATION.cff").write_text(citation_cff(report), encoding="utf-8")
    package = data_package(out, report)
    (out / "datapackage.json").write_text(json.dumps(package, indent=2, ensure_ascii=False)
                                          + "\n", encoding="utf-8")
    write_croissant(out, report, protocol)
    return ["README.md", "CITATION.cff", "datapackage.json", "croissant.json"]


def write_checksums(out: Path, names: list[str]) -> str:
    """``SHA256SUMS`` over ``names`` (sorted), in ``sha256sum`` format."""
    lines = [f"{sha256_file(Path(out) / name)}  {name}\n"
             for name in sorted(set(names) - {"SHA256SUMS"})]
    (Path(out) / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")
    return "SHA256SUMS"


# -- dataset card ------------------------------------------------------------------------------

def _yaml(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def _figure(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(stage: dict, name: str, level: float) -> str:
    interval = stage.get(f"{name}_ci")
    if not interval or interval[0] is None:
        return _figure(stage.get(name))
    return (f"{_figure(stage.get(name))} ({level:.0%} CI {_figure(interval[0])}-"
            f"{_figure(interval[1])})")


def dataset_card(report: ProcessReport, gold: pd.DataFrame) -> str:
    """``README.md``: YAML header (Hugging Face convention) and a datasheet from ``report``."""
    release = report.config.release
    fmt, counts = release.format, report.counts
    name = report.protocol
    pairs = counts.released_pairs
    language = report.language or "en"
    header = ["---", f"pretty_name: {_yaml(f'{name} gold standard (built with lexgold)')}",
              "language:", f"- {_yaml(language)}", "license: other",
              f"license_name: {_yaml(release.stated('license'))}",
              "size_categories:", f"- {_size_category(pairs)}",
              "task_categories:", "- sentence-similarity",
              "tags:", f"- {KINDS.get(fmt, 'word-pairs')}", "- word-pairs", "- lexgold",
              "configs:", "- config_name: default", "  data_files: gold.csv", "---", ""]
    stages = counts.stages
    simulated = report.simulated
    if simulated:                         # lexgold.process.simulated_label: said first
        header[1] = f"pretty_name: {_yaml(f'{name} gold standard (simulated ratings, lexgold)')}"
        header.insert(header.index("- lexgold") + 1, "- simulated")
    lines = [*(banner(simulated) if simulated else []), f"# {text(name)} gold standard", "",
             f"{pairs} word pairs rated by {stages['final'].raters} accepted "
             f"{'simulated ' if simulated and simulated['share'] == 1 else ''}raters, built "
             f"with lexgold {__version__} {text(following(report.paper, name))}.", ""]
    if report.warnings:
        lines += ["> **Incomplete release.** " + " ".join(
            f"{text(w)}." for w in report.warnings) + " It was written with --allow-incomplete.",
                  ""]
    lines += ["## Files", "", "| file | content |", "| --- | --- |",
              *([f"| {code(report.release_file)} | the gold standard in the published "
                 f"{fmt} layout |",
                 "| `gold.csv` | the same table, comma-separated (spreadsheets, pandas) |"]
                if report.release_file != "gold.csv" else
                ["| `gold.csv` | the gold standard: word1, word2, score |"]),
              "| `exclusions.csv` | every excluded rater, the rule and the figures behind it |",
              "| `report.json`, `report.md` | counts, agreement, settings of the run |",
              "| `datapackage.json` | Frictionless Data Package (`frictionless validate`) |",
              "| `croissant.json` | MLCommons Croissant 1.1 with its Responsible-AI fields |",
              "| `CITATION.cff`, `SHA256SUMS` | how to cite; checksums (`sha256sum -c`) |", "",
              "```python", "import pandas as pd",
              f"gold = pd.read_csv({_loader(fmt, report.release_file, bool(simulated))})",
              "```", ""]
    lines += card_lines(report.machine)      # lexgold.process.machine_mode
    lines += _datasheet(report, gold)
    return "\n".join(header + lines) + "\n"


def _loader(fmt: str, name: str, simulated: bool = False) -> str:
    quoted = json.dumps(name)   # a Python string literal, whatever the name holds
    if name == "gold.csv":
        return quoted
    if fmt == "hyperlex":        # the ratings are trailing fields: read the fixed columns
        return (f'{quoted}, sep=" ", index_col=False, usecols=range(7)'
                + (', skiprows=1' if simulated else ""))   # the "# simulated" first line
    return f'{quoted}, sep="\\t"'


def _datasheet(report: ProcessReport, gold: pd.DataFrame) -> list[str]:
    release = report.config.release
    counts, agreement = report.counts, report.agreement
    stages = counts.stages
    manifest = report.builder_manifest or {}
    dates = report.dates or {}
    rated, scored = report.scale["ratings"], report.scale["released"]
    level = agreement.get("ci_level", 0.95)
    by_rule = counts.excluded_by_rule
    rules = report.config.exclusions.rules
    simulated = report.simulated
    verb = "simulated" if simulated and simulated["share"] == 1 else "collected"
    lines = ["## Datasheet", "",
             "Sections of Gebru et al. (2021), *Datasheets for Datasets*. Figures come from "
             "`report.json`; the authors' statements from the protocol's `[process.release]` "
             f"(\"{NOT_STATED}\" where they made none).", "",
             "### Motivation", "",
             f"- Pairs and ratings {text(following(report.paper, report.protocol))}.",
             "- Creators: " + (text(", ".join(release.authors)) or NOT_STATED) + ".", "",
             "### Composition", "",
             f"- {counts.released_pairs} pairs; columns as in the published "
             f"{text(release.format)} "
             f"file (see `report.md` and lexgold's docs/process.md).",
             f"- Scores: {scored[0]:g}-{scored[1]:g}.", ""]
    if (report.norms or {}).get("note"):
        lines.insert(-1, "- Association and concreteness columns: "
                     + text(report.norms['note']))
    for column in ("POS", "TYPE"):
        if column in gold.columns and gold[column].astype(str).str.len().gt(0).any():
            table = gold[column].replace("", "(none)").value_counts().sort_index()
            lines.insert(-1, f"- {column}: " + ", ".join(f"{text(k)} {v}"
                                                         for k, v in table.items())
                         + ".")
    lines += ["### Collection process", "",
              f"- Protocol: {protocol_shown(report.protocol_file)} "
              f"(sha256 {code(report.protocol_sha256)}).",
              "- Pairs: " + pairs_origin(manifest, report.pairs_file, report.ratings_source),
              (f"- Ratings {verb}: {text(dates['first'])} to {text(dates['last'])} (first and "
               "last answer)." if dates.get("first") and dates.get("last") else
               f"- Ratings {verb}: dates not recorded in the ratings."),
              f"- Raters {'simulated' if verb == 'simulated' else 'recruited'}: "
              f"{stages['raw'].raters} ({stages['raw'].ratings} "
              f"ratings on {stages['raw'].pairs} pairs); collection: "
              f"{text(release.stated('collection_type'))}.",
              f"- Recruitment, payment and consent: {text(release.stated('recruitment'))}.", "",
              "### Preprocessing and cleaning", "",
              f"- Calibration: {counts.calibrated_raters} raters shifted "
              f"(`[process.calibration]`: "
              f"{code(json.dumps(asdict(report.config.calibration), sort_keys=True))}).",
              f"- Exclusion rules: {text(', '.join(rules)) if rules else 'none'}; "
              f"{counts.excluded_raters} raters excluded, "
              f"{stages['final'].raters} accepted.", ""]
    if rules:
        lines += ["| rule | raters excluded |", "| --- | --- |"]
        lines += [f"| {text(rule)} | {by_rule.get(rule, 0)} |" for rule in rules]
        lines += ["", "A rater may meet several rules; `exclusions.csv` lists each.", ""]
    aggregate = report.aggregate or {"rule": "mean", "applied": "mean"}
    rule = (text(aggregate["description"]) if "description" in aggregate
            else "the mean of the accepted ratings of a pair")
    if aggregate["rule"] != "mean":
        rule += f" (`[process] aggregate = \"{text(aggregate['rule'])}\"`"
        rule += (f": {text(aggregate['note'])})" if "note" in aggregate else
                 f"; {aggregate['pairs_differing']} pairs differ from the plain mean by more "
                 f"than 0.005, by {aggregate['mean_abs_difference']:.3f} on average on the "
                 f"rating scale)")
    lines += [(f"- Scale transform: {rule}, mapped linearly from [{rated[0]:g}, {rated[1]:g}] "
               f"to [{scored[0]:g}, {scored[1]:g}]." if list(rated) != list(scored) else
               f"- Score: {rule}, on the rating scale {rated[0]:g}-{rated[1]:g} (not "
               "rescaled)."),
              f"- Fewest accepted raters on a pair: {counts.min_raters_per_pair} "
              f"(required: {release.min_raters_per_pair}).", "",
              "### Agreement", "",
              "| stage | IAA-1 (mean pairwise Spearman) | IAA-2 (rater vs mean of others) |",
              "| --- | --- | --- |"]
    for stage in ("raw", "final"):
        lines.append(f"| {stage} | {_ci(agreement[stage], 'iaa1', level)} | "
                     f"{_ci(agreement[stage], 'iaa2', level)} |")
    lines += ["", f"Intervals: percentile bootstrap over pairs, {agreement.get('bootstrap', 0)} "
              f"replicates, seed {text(report.seed)}.", ""]
    lines += beyond_iaa_lines(agreement.get("beyond_iaa"))
    lines += [
              "### Uses", "",
              f"- Intended uses: {USES.get(release.format, 'evaluating models on rated word pairs.')}",
              f"- Known biases: {text(release.stated('biases'))}.",
              f"- Social impact: {text(release.stated('social_impact'))}.", "",
              "### Distribution", "",
              f"- Licence: {text(release.stated('license'))}.",
              f"- Version {text(release.version)}"
              + (f", published {text(date_published(report))}." if date_published(report)
                 else ".")
              + " Citation: see `CITATION.cff`"
              + (", and cite the protocol's paper." if cites_paper(report.paper) else "."), "",
              "### Maintenance", "", f"- Maintenance plan: {text(release.stated('maintenance'))}.", ""]
    return lines


def beyond_iaa_lines(figures: dict | None) -> list[str]:
    """Krippendorff's alpha and the ICC of the released ratings."""
    if not figures:
        return []

    def show(value):
        return "n/a" if value is None else f"{value:.3f}"

    lines = [f"Krippendorff's alpha of the released ratings: interval "
             f"{show(figures['alpha_interval'])}, ordinal {show(figures['alpha_ordinal'])}."]
    if "icc" in figures:
        ci = figures["icc"]
        lines.append(f"ICC(2,1) (one rater) {show(figures['icc1'])} "
                     f"[{show(ci['icc1_ci95'][0])}, {show(ci['icc1_ci95'][1])}], ICC(2,k) "
                     f"({_k_raters(ci['raters'])}) "
                     f"{show(figures['icck'])} [{show(ci['icck_ci95'][0])}, "
                     f"{show(ci['icck_ci95'][1])}]: two-way random, absolute agreement, 95 % "
                     f"intervals, on each tranche's complete block of raters and pairs.")
    return [*lines, ""]


def pairs_origin(manifest: dict, pairs_file: dict | None = None, source: str = "study") -> str:
    """Where the pairs came from, in words: the builder's run (lexgold version, protocol,
    seed, and each input file with its short SHA-256), a translation's ``aligned.csv``, or
    the pairs file ``--pairs`` named, the study's pairs or the ratings file's (``source``,
    ``report.json`` ``ratings_source``) when no builder manifest stands beside them.

    >>> pairs_origin({"lexgold_version": "1.0", "protocol": {"file": "simlex999.toml",
    ...               "sha256": "ab"}, "seed": 1,
    ...               "resources": {"usf": [{"file": "usf.csv", "sha256": "0123456789abcdef"}]}})
    'built by lexgold 1.0 with protocol `simlex999.toml` (sha256 `ab`), seed 1, from usf: `usf.csv` (sha256 `0123456789ab`).'
    """
    if not manifest:
        if pairs_file:
            return (f"from {code(pairs_file.get('name', '?'))}"
                    + (f" (sha256 {code(pairs_file['sha256'][:12])})" if pairs_file.get("sha256")
                       else "") + "; no builder report beside it.")
        return ("the study's pairs; no builder report was stored with them."
                if source in ("study", "export") else
                "the pairs of the ratings file; no builder report names them.")
    if manifest.get("aligned"):             # a translation's aligned.csv (docs/languages.md)
        aligned = manifest["aligned"]
        origins = ", ".join(f"{text(k)} {v}" for k, v in (aligned.get("by_origin") or {}).items())
        flags = ", ".join(f"{text(k)} {v}" for k, v in (aligned.get("flags") or {}).items() if v)
        return (f"{aligned.get('pairs', '?')} translated pairs ({text(aligned.get('lang') or '?')}) "
                f"from {code(aligned.get('file') or 'aligned.csv')} (`lexgold translate "
                f"adjudicate`): {origins or 'origin not recorded'}; "
                f"{aligned.get('dropped', '?')} source pairs dropped"
                + (f"; flagged: {flags}" if flags else "") + ".")
    inputs = []
    for name, files in sorted((manifest.get("resources") or {}).items()):
        listed = ", ".join(f"{code(item.get('file', '?'))}"
                           + (f" (sha256 {code(str(item['sha256'])[:12])})"
                              if item.get("sha256") else "")
                           for item in (files if isinstance(files, list) else [files])
                           if isinstance(item, dict))
        inputs.append(f"{text(name)}: {listed or 'none'}")
    protocol = manifest.get("protocol") or {}
    return (f"built by lexgold {text(manifest.get('lexgold_version', '?'))} with protocol "
            f"{code(_protocol_name(manifest))} (sha256 {code(protocol.get('sha256', '?'))}), "
            f"seed {text(manifest.get('seed', '?'))}"
            + (f", from {'; '.join(inputs)}" if inputs else "") + ".")


def protocol_shown(protocol_file: str) -> str:
    """A protocol file's name as code ("file `simlex999.toml`"); a study's stored protocol (no
    file) as words ("simlex999, as stored in the study").

    >>> protocol_shown("/x/simlex999.toml"), protocol_shown("simlex999, as stored in the study")
    ('file `simlex999.toml`', 'simlex999, as stored in the study')
    """
    return (text(protocol_file) if " " in protocol_file
            else "file " + code(Path(protocol_file).name))


def _k_raters(raters) -> str:
    """What ICC(2,k)'s k is: a tranche's raters, or their mean over tranches of unequal size.

    >>> _k_raters(12), _k_raters(42.33), _k_raters(None)
    ("the mean of a tranche's 12 raters", 'the mean of k raters, k = 42.3 on average over the tranches', "the mean of a tranche's raters")
    """
    if raters is None:
        return "the mean of a tranche's raters"
    if float(raters).is_integer():
        return f"the mean of a tranche's {int(raters)} raters"
    return f"the mean of k raters, k = {raters:.1f} on average over the tranches"


def _protocol_name(manifest: dict) -> str:
    """The protocol file a builder manifest names (``file``; TR9856's ``path``)."""
    protocol = manifest.get("protocol") or {}
    return str(protocol.get("file") or protocol.get("path") or "?")


# -- CITATION.cff ------------------------------------------------------------------------------

def citation_cff(report: ProcessReport | BwsReport) -> str:
    """Citation File Format 1.2.0: the dataset (``[process.release]`` ``authors``,
    ``version``, ``date_published``, ``license``), with the protocol's paper as a reference;
    a simulated release says so in its title, abstract and keywords."""
    release = report.config.release
    simulated = report.simulated
    title = report.protocol + (" gold standard (simulated ratings, built with lexgold)"
                               if simulated else " gold standard (built with lexgold)")
    lines = ["cff-version: 1.2.0",
             "message: " + _yaml("If you use this dataset, please cite it as below"
                                 + (" and the paper whose protocol it follows."
                                    if cites_paper(report.paper) else ".")),
             "type: dataset", f"title: {_yaml(title)}", "authors:"]
    lines += [f"  - name: {_yaml(author)}" for author in release.authors] or \
        [f"  - name: {_yaml('authors ' + NOT_STATED)}"]
    lines.append(f"version: {_yaml(release.version)}")
    published = date_published(report) if isinstance(report, ProcessReport) else \
        release.date_published
    if published:
        lines.append(f"date-released: {_yaml(published)}")
    if release.license.strip():
        lines.append(f"license: {_yaml(release.license.strip())}")
    if simulated:             # lexgold.process.simulated_label: the citation says it too
        lines += [f"abstract: {_yaml(statement(simulated))}", "keywords:",
                  "  - simulated data"]
    paper = report.paper or ""
    match = re.match(r"^(.*?) (\d{4}), (.*)$", paper)
    if match:
        lines += ["references:", "  - type: article", f"    title: {_yaml(match.group(3))}",
                  "    authors:", *(f"      - family-names: {_yaml(name)}"
                                    for name in paper_authors(match.group(1))),
                  f"    year: {match.group(2)}"]
    return "\n".join(lines) + "\n"


def paper_authors(names: str) -> list[str]:
    """A paper's author list split into names (CITATION.cff lists one author an entry).

    >>> paper_authors("Hill, Reichart & Korhonen")
    ['Hill', 'Reichart', 'Korhonen']
    >>> paper_authors("Vulić, Gerz, Kiela, Hill and Korhonen")
    ['Vulić', 'Gerz', 'Kiela', 'Hill', 'Korhonen']
    >>> paper_authors("Levy et al.")
    ['Levy', 'et al.']
    """
    names = re.sub(r"\s+et al\.?$", ", et al.", names.strip())
    return [name.strip() for name in re.split(r",|&|\band\b", names) if name.strip()]


# -- datapackage.json --------------------------------------------------------------------------

def _fields(frame: pd.DataFrame) -> list[dict]:
    fields = []
    for name, dtype in frame.dtypes.items():
        kind = ("boolean" if pd.api.types.is_bool_dtype(dtype) else
                "integer" if pd.api.types.is_integer_dtype(dtype) else
                "number" if pd.api.types.is_numeric_dtype(dtype) else "string")
        fields.append({"name": str(name), "type": kind})
    return fields


def _resource(out: Path, name: str, path: str, schema_frame: pd.DataFrame, *,
              delimiter: str = ",", header: bool = True, comment: str | None = None) -> dict:
    dialect = {"delimiter": delimiter, "header": header}
    if comment:
        dialect["commentChar"] = comment
    fields = _fields(schema_frame)
    for field in fields:
        if field["type"] == "boolean":
            field.update(trueValues=["True"], falseValues=["False"])
    return {"name": name, "path": path, "profile": "tabular-data-resource", "format": "csv",
            "mediatype": "text/csv" if delimiter == "," else "text/tab-separated-values",
            "encoding": "utf-8", "bytes": (out / path).stat().st_size,
            "hash": f"sha256:{sha256_file(out / path)}", "dialect": dialect,
            "schema": {"fields": fields}}


def data_package(out: Path, report: ProcessReport) -> dict:
    """A Frictionless (tabular) Data Package of the folder's tables, read back from disk."""
    fmt = report.config.release.format
    gold = pd.read_csv(out / "gold.csv", keep_default_na=False, na_values=[""])
    resources = [_resource(out, "gold", "gold.csv", gold)]
    release = report.release_file
    if release == "gold.csv":    # plain: gold.csv is the release
        pass
    elif fmt == "simlex":
        resources.append(_resource(out, "release", release, gold, delimiter="\t"))
    elif fmt == "tr9856":
        columns = ["term1", "term2", "score", *(["simulated"] if "simulated" in gold else [])]
        resources.append(_resource(out, "release", release, gold[columns],
                                   delimiter="\t", header=False, comment="#"))
    else:                        # HyperLex: rows end in as many ratings as the pair has
        resources.append({"name": "release", "path": release, "format": "txt",
                          "mediatype": "text/plain", "encoding": "utf-8",
                          "bytes": (out / release).stat().st_size,
                          "hash": f"sha256:{sha256_file(out / release)}",
                          "description": "WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD, "
                                         "then the accepted ratings; one space between fields"})
    for name, path in (("exclusions", "exclusions.csv"), ("splits", "splits.csv")):
        if (out / path).is_file() and path in report.files:
            table = pd.read_csv(out / path, keep_default_na=False, na_values=[""])
            resources.append(_resource(out, name, path, table))
    slug = re.sub(r"[^a-z0-9._-]+", "-", report.protocol.lower()).strip("-") or "gold"
    return {"name": f"{slug}-gold", "title": f"{report.protocol} gold standard",
            "profile": "data-package" if fmt == "hyperlex" else "tabular-data-package",
            "description": ((statement(report.simulated) + " ") if report.simulated
                            else "") + "Built with lexgold; see README.md (dataset card) and "
                                       "report.json.",
            "resources": resources}


@contextmanager
def staged_folder(target: Path):
    """A release folder written whole or not at all.

    Yields a new folder beside ``target`` to write the release into. When the block ends
    normally, the folder takes ``target``'s place in one rename (a previous release there is
    moved aside first and removed after); when it raises, the folder is removed and ``target``
    is as it was. ``target`` must be new, empty or a previous release (it holds ``SHA256SUMS``):
    a folder of other files is never replaced.
    """
    target = Path(target)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError("exists and is not a folder; name a new or empty folder", path=target)
    if target.is_dir() and any(target.iterdir()) and not (target / "SHA256SUMS").is_file():
        raise InputError("is a folder of other files, not a lexgold release (no SHA256SUMS); "
                         "name a new or empty folder", path=target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        yield staging
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            target.rename(old / target.name)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
