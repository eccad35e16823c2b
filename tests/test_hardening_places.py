"""How many places a script can take per hour (docs/hardening.md, round 3): `lexgold serve
--rate-limit 30` (the default) over HTTP, with and without `--trusted-proxies`.

A script takes a place by entering with a fresh platform ID, consenting and reading the
instructions (the last "Next" claims a tranche place). The limit counts new raters and claims
per client address and hour. Behind deploy/'s nginx (which sets `X-Forwarded-For` to the
connection's address) with `--trusted-proxies 1`, the client address is the script's own: 30
places per hour and address, and nobody else is held up. Without `--trusted-proxies` behind a
proxy every client shares the proxy's address: the script's 30 places are the whole site's
hourly allowance, and every real rater after it is turned away.
"""

import re

import httpx
import pytest

from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file
from test_hardening_faults import load_test

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("places-pairs") / "pairs.csv")


@pytest.fixture
def study(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=60)
    url = database_url(tmp_path / "places.sqlite")
    create_study(protocol, pairs, url, seed=1)
    return url


def take_place(base: str, number: int, forwarded: str | None) -> int:
    """One scripted rater: 200 when it got a place, else the refusal's status (429)."""
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    with httpx.Client(base_url=base, timeout=30, headers=headers) as client:
        page = client.get(f"/?PROLIFIC_PID=script{number:05d}")
        token = CSRF.search(page.text).group(1)
        sent = client.post("/consent", data={"csrf_token": token, "consent": "yes",
                                             "native": "yes"})
        if sent.status_code != 302:
            return sent.status_code
        while 'name="page"' in (html := client.get("/task").text):
            number_ = re.search(r'name="page" value="(\d+)"', html).group(1)
            sent = client.post("/instructions", data={"csrf_token": token, "page": number_})
            if sent.status_code != 302:
                return sent.status_code
        return 200 if 'name="position"' in client.get("/task").text else 409


def places_taken(base: str, forwarded=lambda i: None, tries: int = 40) -> tuple[int, int]:
    """Places a script takes in ``tries`` attempts (well within one hour), and refusals."""
    results = [take_place(base, i, forwarded(i)) for i in range(tries)]
    return results.count(200), results.count(429)


@pytest.mark.parametrize("proxies", [0, 1])
def test_a_script_from_one_address_takes_30_places_an_hour(study, tmp_path, proxies):
    """Directly (no proxy) or behind a proxy that names the real address: 30 places per hour
    from one address, whatever X-Forwarded-For the script forges in front of the proxy's."""
    server = load_test.Server(study, tmp_path, threads=4,
                              args=("--rate-limit", "30", "--trusted-proxies", str(proxies)))
    base = server.start()
    try:
        # behind nginx the last X-Forwarded-For entry is the one nginx sets: the real address
        forged = (lambda i: f"203.0.113.{i % 250}, 198.51.100.7") if proxies else \
            (lambda i: f"203.0.113.{i % 250}")
        taken, refused = places_taken(base, forged)
        assert (taken, refused) == (30, 10)
        if proxies:    # another real client behind the same proxy is not held up
            assert take_place(base, 999, "198.51.100.8") == 200
    finally:
        server.stop()


def test_without_trusted_proxies_behind_a_proxy_one_script_uses_everyones_allowance(
        study, tmp_path):
    """Every client behind the proxy shares its address (the app sees 127.0.0.1): after the
    script's 30 places a real rater, from another address in front of the proxy, is refused."""
    server = load_test.Server(study, tmp_path, threads=4, args=("--rate-limit", "30"))
    base = server.start()
    try:
        taken, _ = places_taken(base, lambda i: "198.51.100.7", tries=30)
        assert taken == 30
        assert take_place(base, 999, "198.51.100.8") == 429
    finally:
        server.stop()
