"""``croissant.json`` in the release folder: MLCommons Croissant 1.1 with its RAI fields,
validated offline with mlcroissant and read back record by record."""

import hashlib
import json
import socket

import mlcroissant as mlc
import numpy as np
import pandas as pd
import pytest

from lexgold.process.croissant import CONFORMS_TO, croissant
from lexgold.process.pipeline import run
from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs
from lexgold.protocols import load_protocol

#: what mlcroissant recommends that a release cannot know without a clock or the authors
RECOMMENDED_ONLY = ("datePublished", "version")


def release(tmp_path, protocol, n=40):
    pairs = usf_pairs(n, rng=np.random.default_rng(1)).assign(topic="t1")
    ratings, _ = simulate_ratings(pairs, protocol, rng=np.random.default_rng(2), tranches=0,
                                  raters_per_tranche=12, crowd=Crowd(spammers=0.0))
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    report = run(tmp_path / "ratings.csv", protocol, tmp_path / "out", seed=1, plots=False,
                 bootstrap=0, allow_incomplete=True)
    return tmp_path / "out", report


@pytest.fixture
def offline(monkeypatch):
    """Any network connection fails the test: validation must work offline."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access during validation: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def load(path):
    dataset = mlc.Dataset(jsonld=path)           # raises ValidationError on any error
    warnings = dataset.metadata.ctx.issues.warnings
    assert all(any(name in w for name in RECOMMENDED_ONLY) for w in warnings), warnings
    return dataset


@pytest.mark.parametrize("protocol, tables", [("simlex999", {"gold", "exclusions"}),
                                              ("hyperlex", {"gold", "exclusions", "splits"}),
                                              ("tr9856", {"gold", "exclusions"})])
def test_croissant_validates_offline_and_reads_the_released_tables(tmp_path, offline,
                                                                   protocol, tables):
    out, report = release(tmp_path, protocol)
    dataset = load(out / "croissant.json")
    sets = {record_set.name for record_set in dataset.metadata.record_sets}
    assert sets == tables
    gold = pd.read_csv(out / "gold.csv", keep_default_na=False)
    records = list(dataset.records("gold"))
    first = gold.columns[0]
    assert [r[f"gold/{first}"].decode() for r in records] == gold[first].tolist()
    assert len(records) == report.counts.released_pairs


def test_distribution_lists_every_file_with_its_sha256(tmp_path, offline):
    out, report = release(tmp_path, "simlex999")
    document = json.loads((out / "croissant.json").read_text())
    assert document["conformsTo"] == CONFORMS_TO == "http://mlcommons.org/croissant/1.1"
    listed = {f["contentUrl"]: f for f in document["distribution"]}
    # every file of the folder but the two that cannot hold their own hash
    assert set(listed) == {p.name for p in out.iterdir()} - {"croissant.json", "SHA256SUMS"}
    for name, entry in listed.items():
        data = (out / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), name
        assert entry["contentSize"] == f"{len(data)} B"
    assert listed["SimLex-999.txt"]["encodingFormat"] == "text/tab-separated-values"
    assert "croissant.json" in (out / "SHA256SUMS").read_text()
    assert "croissant.json" in report.files


def test_rai_fields_come_from_the_report_and_the_protocol(tmp_path):
    out, report = release(tmp_path, "simlex999")
    document = json.loads((out / "croissant.json").read_text())
    counts, stages = report.counts, report.counts.stages
    label = load_protocol("simlex999")["study"]["texts"]["native_speaker_label"]
    assert document["rai:annotatorDemographics"][0] == (f"Raters confirmed on the consent page: "
                                                        f"\"{label}\"")
    assert document["rai:dataCollectionTimeframe"] == [report.dates["first"],
                                                       report.dates["last"]]
    # simulated ratings (lexgold simulate): said first, then what the simulation followed
    assert document["rai:dataCollectionType"] == ["Simulation"]
    assert document["rai:dataCollection"].startswith(
        f"Simulated data: all {stages['raw'].ratings} ratings were drawn from lexgold's "
        "simulated rater model")
    assert (f"Ratings simulated following the protocol of {report.paper}: "
            f"{stages['raw'].raters} raters gave {stages['raw'].ratings} ratings on "
            f"{stages['raw'].pairs} pairs, on a scale of 0-6. The protocol plans 10 tranches "
            "of about 52 raters each.") in document["rai:dataCollection"]
    assert report.protocol_sha256 in document["rai:dataAnnotationProtocol"][0]
    final = report.agreement["final"]
    assert f"final ratings: IAA-1 (mean pairwise Spearman) {final['iaa1']:.3f}" in \
        document["rai:dataAnnotationAnalysis"][1]
    assert (f"{counts.excluded_raters} raters excluded, {stages['final'].raters} accepted"
            in document["rai:dataPreprocessingProtocol"][1])
    # simulated, and incomplete (12 raters, 36 required): its limitations say so first
    assert document["rai:dataLimitations"][0].startswith("Simulated data: all ")
    assert report.warnings and document["rai:dataLimitations"][1] == \
        f"Incomplete release: {report.warnings[0]}."
    assert document["rai:annotationsPerItem"].startswith(
        f"At least {counts.min_raters_per_pair} accepted raters per pair (protocol: 36)")
    assert document["citeAs"].endswith(f"Please also cite {report.paper}.")
    assert "rai:dataAnnotationPlatform" not in document     # ratings from a CSV: not known


def test_no_demographics_claimed_where_the_protocol_collected_none(tmp_path):
    out, report = release(tmp_path, "tr9856")
    protocol = load_protocol("tr9856")
    del protocol["study"]["texts"]["native_speaker_label"]
    document = croissant(out, report, protocol)
    assert document["rai:annotatorDemographics"] == [
        "No demographic information was collected by the protocol."]
