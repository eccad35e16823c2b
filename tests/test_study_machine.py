"""Issue 45, item 4 (the site): a machine rater in a live study, ``machine-allocate``.

``lexgold study create --machine FILE`` stores the machine's number for each pair and its
provenance; the adaptive allocator gives top-up raters to the pairs the machine's gain ranks
first and none to the pairs whose gain is 0 or less; the admin view names the machine; the
export's description records it; the schema's revision goes up and down.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import delete, func, inspect, select, update
from test_annotate_adaptive import adaptive_protocol
from test_annotate_app import make_app, refresh_figures, usf_pair_file

from lexgold.annotate.rehearse import rehearse
from lexgold.cli import cli
from lexgold.compression import sha256_file
from lexgold.errors import InputError
from lexgold.live import allocator
from lexgold.crowd.simulate import Crowd
from lexgold.protocols import load_protocol
from lexgold.study import models as m
from lexgold.study.config import load_study_config
from lexgold.study.db import database_url, downgrade, make_engine, postgres_schema, \
    session_factory, upgrade
from lexgold.study.store import create_study

ROOT2 = np.sqrt(0.5)          # two ratings m -/+ sqrt(1/2): sample variance 1


def two_ratings(means: dict) -> pd.DataFrame:
    """Two raters per pair, ``mean -/+ sqrt(1/2)``: each pair's variance is 1, so the pooled
    within-pair variance is 1."""
    rows = [(pair, f"r{k}", mean + sign * ROOT2) for pair, mean in means.items()
            for k, sign in enumerate((-1, 1))]
    return pd.DataFrame(rows, columns=["pair", "rater_id", "rating"])


# -- the ranking (hand cases) -------------------------------------------------------------------

def test_the_pair_off_the_machines_line_gets_the_top_up_and_the_others_stop():
    """Means 1, 3, 5, 4 (two raters, variance 1) against machine numbers 0, 1, 2, 1; pair 5
    (mean 3) has no machine number. By hand: the line through the covered means is
    c = 1.25 + 2 x, so d = (-0.25, -0.25, -0.25, 0.75); tau^2 = max(0, 0.75 / 2 - 0.5) = 0:
    the machine explains the means (lambda = 1) and w = 0. One more rater on 2 (e = 1):
    base = 1 * 1 / (2 * 3) = 1/6, shrink = 1 - (2/3)^2 = 5/9, excess = d^2 - 1/2. Pair 4,
    off the line, gains 1/6 + 5/9 * 1/16; pairs 1-3, on it, 1/6 - 5/9 * 7/16 < 0 (they stop);
    pair 5, uncovered, the base 1/6 alone; pair 6 has no rating and comes first."""
    ratings = two_ratings({1: 1.0, 2: 3.0, 3: 5.0, 4: 4.0, 5: 3.0})
    machine = pd.Series({1: 0.0, 2: 1.0, 3: 2.0, 4: 1.0, 5: np.nan, 6: 3.0})
    got = allocator.machine_ranking(ratings, machine, [1, 2, 3, 4, 5, 6], extra=1)
    assert got["pair"].tolist() == [6, 4, 5, 1, 2, 3]
    gain = got.set_index("pair")["gain"]
    assert gain[6] == np.inf
    base, shrink = 1 / 6, 5 / 9
    assert gain[4] == pytest.approx(base + shrink * (0.75 ** 2 - 0.5), abs=1e-12)
    assert gain[5] == pytest.approx(base, abs=1e-12)
    for pair in (1, 2, 3):
        assert gain[pair] == pytest.approx(base + shrink * (0.25 ** 2 - 0.5), abs=1e-12)
        assert gain[pair] < 0
    assert got.set_index("pair").loc[4, ["n", "mean", "machine"]].tolist() == [2, 4.0, 1.0]


def test_a_machine_that_knows_nothing_leaves_every_pair_its_noise_gain():
    """Machine numbers unrelated to the means (slope 0 on the covered pairs): lambda = 0, so
    every rated pair gains the uniform term sigma^2 e / (n (n + e)) = 2 / (2 * 4) and none
    stops."""
    ratings = two_ratings({1: 1.0, 2: 5.0, 3: 1.0, 4: 5.0})
    machine = pd.Series({1: 0.0, 2: 0.0, 3: 1.0, 4: 1.0})
    got = allocator.machine_ranking(ratings, machine, [1, 2, 3, 4], extra=2)
    np.testing.assert_allclose(got["gain"], [0.25] * 4, rtol=1e-12)
    assert got["pair"].tolist() == [1, 2, 3, 4]          # ties: lower key first


def test_a_machine_that_cannot_be_calibrated_yet_is_said_so():
    ratings = two_ratings({1: 1.0, 2: 3.0, 3: 5.0})
    with pytest.raises(InputError, match="2 pairs have both a machine score and human"):
        allocator.machine_ranking(ratings, pd.Series({1: 0.0, 2: 1.0}), [1, 2, 3])
    one_each = pd.DataFrame({"pair": [1, 2, 3, 4], "rater_id": "a",
                             "rating": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(InputError, match="no pair has two raters"):
        allocator.machine_ranking(one_each, pd.Series({1: 0.0, 2: 1.0, 3: 2.0, 4: 3.0}),
                                  [1, 2, 3, 4])


# -- a study with a machine ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 60), ("V", "V", 20), ("A", "AJ", 12)))


def truth_of(pairs) -> pd.DataFrame:
    """Each pair's true score on SimLex's 0-6 scale for the rehearsal's simulated raters."""
    frame = pd.read_csv(pairs)
    rng = np.random.default_rng(7)
    return frame[["word1", "word2"]].assign(truth=rng.uniform(0.5, 5.5, len(frame)))


def machine_file(folder, pairs, every: int = 1, *, model="gpt-test", sidecar=True,
                 noise: float = 0.1):
    """A machine's ratings on a 0-10 scale: the simulated raters' truth mapped to 0-10 with
    normal noise of SD ``noise``, of every ``every``-th pair, in the other word order, with a
    provenance sidecar."""
    truth = truth_of(pairs).iloc[::every]
    rng = np.random.default_rng(11)
    path = folder / "machine.csv"
    pd.DataFrame({"word1": truth["word2"], "word2": truth["word1"],
                  "score": (truth["truth"] * 10 / 6 + rng.normal(0, noise, len(truth))).round(2)}
                 ).to_csv(path, index=False)
    if sidecar:
        (folder / "machine.csv.json").write_text(json.dumps(
            {"model": model, "prompt": "Rate the similarity ...", "prompt_sha256": "ab" * 32,
             "endpoint_host": "127.0.0.1"}), encoding="utf-8")
    return path


def adaptive_study(folder, pairs, machine=None, **keys):
    protocol = adaptive_protocol(folder, "simlex", {"tranches": 2}, first_round_raters=2,
                                 topup_pairs=12, topup_raters=1, target_reliability=1.0,
                                 budget_ratings=100000, **keys)
    url = database_url(folder / "study.sqlite")
    report = create_study(protocol, pairs, url, seed=1, machine=machine)
    return protocol, url, report


def test_top_ups_go_to_the_pairs_the_machine_ranks_first(tmp_path, pairs):
    """After the first round (two tranches of 2 simulated raters) the top-up tranche holds
    the unique pairs of machine_ranking with a positive gain, grouped as the layout needs, and
    none whose gain is 0 or less; the rehearsal says its raters were simulated."""
    machine = machine_file(tmp_path, pairs, every=2)
    protocol, url, report = adaptive_study(tmp_path, pairs, machine)
    n_pairs = len(pd.read_csv(pairs))
    assert report["machine"]["pairs_covered"] == -(-n_pairs // 2)
    assert report["machine"]["pairs"] == n_pairs and report["machine"]["model"] == "gpt-test"
    result = rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0),
                      truth=truth_of(pairs), max_raters=4)
    assert result["machine"]["simulated"] is True
    assert result["machine"]["mode"] == "machine-allocate"
    assert result["machine"]["ranked_by"] == "machine"
    engine = make_engine(url)
    config = load_study_config(load_protocol(protocol))
    with session_factory(engine)() as session:
        assert sorted(session.scalars(select(m.Tranche.number))) == [1, 2, 3]
        ratings = allocator.completed_ratings(session)
        scores = pd.Series(dict(session.execute(select(m.Pair.id, m.Pair.machine_score)).all()),
                           dtype=float)
        unique = session.scalars(select(m.Pair.id).where(~m.Pair.consistency)).all()
        ranking = allocator.machine_ranking(ratings, scores, unique, config.topup_raters)
        positive = ranking.loc[ranking["gain"] > 0, "pair"].tolist()
        stopped = set(ranking.loc[ranking["gain"] <= 0, "pair"])
        assert positive and stopped                  # the machine both spends and stops
        assert result["machine"]["stopped"] == len(stopped)
        want = allocator.fill_groups(positive, 12, allocator._pair_frame(session), config)
        chosen = set(session.scalars(select(m.Item.pair_id).join(
            m.Tranche, m.Item.tranche_id == m.Tranche.id).join(
            m.Pair, m.Item.pair_id == m.Pair.id).where(m.Tranche.number == 3,
                                                       ~m.Pair.consistency)))
        assert chosen == set(want) and not chosen & stopped
        # without the machine the site's rule would have chosen other pairs
        site = allocator.least_certain(allocator.pair_table(ratings), unique, len(unique),
                                       config.topup_raters)
        assert set(site[:12]) != set(positive[:12])
    engine.dispose()


def test_a_study_stops_when_the_machine_gives_no_pair_a_gain(tmp_path, pairs):
    """A machine whose numbers are the human means themselves (a perfect machine): no mean
    lies off its line, every gain is negative, and the study stops (status ``machine``)."""
    machine = machine_file(tmp_path, pairs)
    protocol, url, _ = adaptive_study(tmp_path, pairs, machine)
    rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0),
             truth=truth_of(pairs), max_raters=4)
    engine = make_engine(url)
    config = load_study_config(load_protocol(protocol))
    with session_factory(engine)() as session:
        third = session.scalar(select(m.Tranche.id).where(m.Tranche.number == 3))
        for table in (m.Slot, m.Item, m.Step):      # the top-up the rehearsal added, unanswered
            session.execute(delete(table).where(table.tranche_id == third))
        session.execute(delete(m.Tranche).where(m.Tranche.id == third))
        means = allocator.pair_table(allocator.completed_ratings(session))["mean"]
        for pair, mean in means.items():
            session.execute(update(m.Pair).where(m.Pair.id == int(pair))
                            .values(machine_score=float(mean)))
        session.commit()
        step = allocator.allocate(session, config)
        assert step["status"] == "machine", step
        assert step["machine"]["stopped"] == session.scalar(
            select(func.count()).select_from(m.Pair).where(~m.Pair.consistency))
        assert session.scalar(select(func.count()).select_from(m.Tranche)) == 2
        assert "machine rater gives no pair a positive gain" in allocator.describe_allocation(step)
        stopped = step["machine"]["stopped"]
    engine.dispose()
    app = make_app(url)                       # the refresher's step, then the admin view
    refresh_figures(app)
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    assert f"{stopped} pairs get no more raters (the machine's gain is 0 or less)" in html
    assert "Stopped: the machine rater gives no pair a positive gain" in html


def test_a_study_without_a_machine_allocates_as_before(tmp_path, pairs):
    _, url, report = adaptive_study(tmp_path, pairs)
    assert "machine" not in report
    result = rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0),
                      max_raters=4)
    assert result["machine"] is None
    engine = make_engine(url)
    with session_factory(engine)() as session:
        assert session.scalar(select(func.count()).select_from(m.Machine)) == 0
        assert session.scalar(select(func.count()).select_from(m.Pair)
                              .where(m.Pair.machine_score.is_not(None))) == 0
    engine.dispose()


# -- the command line ----------------------------------------------------------------------------

def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_study_create_machine_says_what_it_covers(tmp_path, pairs):
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2})
    machine = machine_file(tmp_path, pairs, every=3)
    db = tmp_path / "study.sqlite"
    result = invoke("study", "create", "--protocol", protocol, "--pairs", pairs, "--db", db,
                    "--machine", machine)
    assert result.exit_code == 0, result.output
    n_pairs, covered = len(pd.read_csv(pairs)), len(pd.read_csv(machine))
    assert "machine rater: gpt-test (machine.csv, sha256 " in result.output
    assert f"covers {covered} of the study's {n_pairs} pairs; mode machine-allocate" \
        in result.output
    assert "every released score stays a human mean" in result.output
    engine = make_engine(database_url(db))
    with session_factory(engine)() as session:
        stored = session.scalars(select(m.Machine)).one()
        assert (stored.mode, stored.model, stored.column, stored.pairs_covered) == \
            ("allocate", "gpt-test", "score", covered)
        assert stored.provenance["prompt_sha256"] == "ab" * 32
        assert stored.provenance["file"] == "machine.csv"
        assert len(stored.provenance["file_sha256"]) == 64
        scores = dict(session.execute(select(m.Pair.word1, m.Pair.machine_score)).all())
    engine.dispose()
    table = pd.read_csv(machine)
    want = dict(zip(table["word2"], table["score"]))          # written in the other order
    assert {w: x for w, x in scores.items() if x is not None} == pytest.approx(want)
    assert sum(x is None for x in scores.values()) == n_pairs - covered


@pytest.mark.parametrize("text,extra,message", [
    ("word1,word2,score\nalpha,beta,7\ngamma,delta,seven\n", ["--machine-column", "score"],
     r"machine\.csv:3, field 'score': not a number: 'seven'"),
    ("word1,word2,score\nalpha,beta,7\ngamma,delta,seven\n", [],
     r"machine\.csv: no column of numbers besides the words: name the column to read with --machine-column"),
    ("word1,word2,score\nalpha,beta,7\nbeta,alpha,2\n", [],
     r"machine\.csv:3: pair \(beta, alpha\) given twice \(first at line 2\)"),
    ("word1,word2,score\nalpha,beta,7\ngamma,delta,2\n", [],
     r"machine\.csv, field 'word1, word2': covers 0 of the study's \d+ pairs \(its 2 pairs, "
     r"e\.g\. \(alpha, beta\), \(gamma, delta\), are not the study's\)"),
    ("w1,w2,score\nalpha,beta,7\n", [], r"machine\.csv: no word1 column"),
])
def test_a_bad_machine_file_is_one_line_and_makes_nothing(tmp_path, pairs, text, extra,
                                                           message):
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2})
    path = tmp_path / "machine.csv"
    path.write_text(text, encoding="utf-8")
    db = tmp_path / "study.sqlite"
    result = invoke("study", "create", "--protocol", protocol, "--pairs", pairs, "--db", db,
                    "--machine", path, *extra)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert re.search(r"^Error: .*" + message, result.output, flags=re.M), result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not db.exists()


def test_a_machine_needs_an_adaptive_study(tmp_path, pairs):
    machine = machine_file(tmp_path, pairs)
    db = tmp_path / "study.sqlite"
    result = invoke("study", "create", "--protocol", "simlex", "--pairs", pairs, "--db", db,
                    "--machine", machine)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert re.search(r"^Error: .*simlex999\.toml, field 'allocation': a machine rater decides "
                     r"adaptive top-ups \(machine-allocate\): it needs \[study\] allocation = "
                     r"\"adaptive\"", result.output), result.output
    assert not db.exists()


def test_machine_column_names_the_number(tmp_path, pairs):
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2})
    frame = pd.read_csv(pairs).head(10)
    path = tmp_path / "two.csv"
    frame[["word1", "word2"]].assign(raw=np.arange(10.0), parsed=np.arange(10.0) * 2).to_csv(
        path, index=False)
    db = tmp_path / "study.sqlite"
    result = invoke("study", "create", "--protocol", protocol, "--pairs", pairs, "--db", db,
                    "--machine", path)
    assert re.search(r"2 columns \(raw, parsed\) of numbers besides the words: name the "
                     r"column to read with --machine-column", result.output), result.output
    result = invoke("study", "create", "--protocol", protocol, "--pairs", pairs, "--db", db,
                    "--machine", path, "--machine-column", "parsed")
    assert result.exit_code == 0, result.output
    assert "machine rater: model not named (no provenance) (two.csv" in result.output
    engine = make_engine(database_url(db))
    with session_factory(engine)() as session:
        assert sorted(x for x in session.scalars(select(m.Pair.machine_score)) if x is not None) \
            == list(np.arange(10.0) * 2)
        assert session.scalars(select(m.Machine.model)).one() is None
    engine.dispose()


def test_rehearse_says_the_machines_allocation_is_simulated(tmp_path, pairs):
    machine = machine_file(tmp_path, pairs, every=2)
    _, _, report = adaptive_study(tmp_path, pairs, machine)
    db = tmp_path / "study.sqlite"
    result = invoke("study", "rehearse", db, "--max-raters", 4, "--spammers", 0, "--seed", 2,
                    "--quiet")
    assert result.exit_code == 0, result.output
    covered = report["machine"]["pairs_covered"]
    assert re.search(rf"^machine-allocate \(gpt-test, {covered} pairs covered\) chose the "
                     r"top-ups of these simulated raters \(figures simulated, not measured on "
                     r"people\); last step: (added|waiting), \d+ pairs given no more raters; "
                     r"released scores are human means$", result.output, flags=re.M), \
        result.output


# -- the export's description, the admin view ----------------------------------------------------

def test_the_exports_description_names_the_machine(tmp_path, pairs):
    machine = machine_file(tmp_path, pairs, every=2)
    _, url, report = adaptive_study(tmp_path, pairs, machine)
    out = tmp_path / "out" / "ratings.csv"
    result = invoke("study", "export", tmp_path / "study.sqlite", "--out", out)
    assert result.exit_code == 0, result.output
    description = json.loads(out.with_name("ratings.study.json").read_text(encoding="utf-8"))
    assert description["machine"] == {
        "mode": "allocate", "model": "gpt-test", "prompt_sha256": "ab" * 32,
        "file": "machine.csv", "file_sha256": sha256_file(machine),
        "pairs_covered": report["machine"]["pairs_covered"]}
    plain = tmp_path / "plain"
    plain.mkdir()
    adaptive_study(plain, pairs)
    invoke("study", "export", plain / "study.sqlite", "--out", plain / "ratings.csv")
    assert json.loads((plain / "ratings.study.json").read_text())["machine"] is None


def test_the_admin_view_says_a_machine_is_in_use(tmp_path, pairs):
    machine = machine_file(tmp_path, pairs, every=2)
    _, url, report = adaptive_study(tmp_path, pairs, machine)
    app = make_app(url)
    refresh_figures(app)
    admin = app.test_client()
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    html = admin.get("/admin/").get_data(as_text=True)
    summary = re.search(r'<p id="machine-summary">(.*?)</p>', html, flags=re.S).group(1)
    assert "A machine rater is in use: model gpt-test, mode machine-allocate" in summary
    assert "Released scores are human means" in summary
    assert report["machine"]["file_sha256"] in summary and "ab" * 32 in summary
    covered = report["machine"]["pairs_covered"]
    assert f"covers {covered} of the study's {report['machine']['pairs']} pairs" in summary
    plain = tmp_path / "plain"
    plain.mkdir()
    _, url, _ = adaptive_study(plain, pairs)
    other = make_app(url).test_client()
    other.post("/admin/login", data={"password": "s3cret"})
    assert 'id="machine-summary"' not in other.get("/admin/").get_data(as_text=True)


# -- the schema ---------------------------------------------------------------------------------

def revision_0017_round_trip(url: str, folder, pairs):
    """A study with a machine loses the machine (table and pair column) at 0016, keeping its
    pairs, and gets both back, empty, at 0017."""
    machine = machine_file(folder, pairs, every=2)
    protocol = adaptive_protocol(folder, "simlex", {"tranches": 2})
    create_study(protocol, pairs, url, machine=machine)
    engine = make_engine(url)
    downgrade(engine, "0016_preview_links")
    with engine.connect() as connection:
        found = inspect(connection)
        assert "machine" not in found.get_table_names()
        assert "machine_score" not in {c["name"] for c in found.get_columns("pair")}
        assert connection.exec_driver_sql("SELECT count(*) FROM pair").scalar() == \
            len(pd.read_csv(pairs))
    upgrade(engine)
    with session_factory(engine)() as session:
        assert session.scalar(select(func.count()).select_from(m.Machine)) == 0
        assert session.scalar(select(func.count()).select_from(m.Pair)
                              .where(m.Pair.machine_score.is_not(None))) == 0
        assert session.scalar(select(func.count()).select_from(m.Pair)) == len(pd.read_csv(pairs))
    engine.dispose()


def test_revision_0017_sqlite(tmp_path, pairs):
    revision_0017_round_trip(database_url(tmp_path / "mig.sqlite"), tmp_path, pairs)


@pytest.mark.postgres
def test_revision_0017_postgres(postgres_url, tmp_path, pairs):
    with postgres_schema(postgres_url, "machine") as (_, url):
        revision_0017_round_trip(url, tmp_path, pairs)
