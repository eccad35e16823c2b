"""The exclusion rules over simulated rater behaviours they were not designed around: noisy
raters, raters who do not remember earlier answers, strong personal bias, raters who quit."""

import numpy as np
import pytest

from lexgold.crowd.simulate import exclusion_outcome, usf_pairs


@pytest.fixture(scope="module")
def pairs(usf):
    return usf_pairs(200, rng=np.random.default_rng(0), usf=usf)


def outcome(pairs, protocol, noise_sd, bias_sd, recall, quitters, seed=1, **keys):
    found = exclusion_outcome(pairs, protocol, noise_sd=noise_sd, bias_sd=bias_sd,
                              recall=recall, quitters=quitters, seed=seed, **keys)
    return found["excluded"], found["honest"], found["spammers"], found["quitters"]


# protocol, noise_sd, bias_sd, recall (chance of repeating an earlier answer), quitters
BEHAVIOURS = [("hyperlex", 1.0, 0.7, 0.0, 0.0), ("hyperlex", 1.5, 0.7, 0.0, 0.0),
              ("hyperlex", 1.0, 1.5, 0.5, 0.1), ("simlex", 1.2, 0.7, 0.0, 0.1),
              ("simlex", 0.5, 1.5, 0.995, 0.0)]


@pytest.mark.parametrize("protocol, noise_sd, bias_sd, recall, quitters", BEHAVIOURS)
def test_rules_keep_honest_raters_and_catch_spammers_and_quitters(
        pairs, protocol, noise_sd, bias_sd, recall, quitters):
    out, honest, spam, quit = outcome(pairs, protocol, noise_sd, bias_sd, recall, quitters)
    # the pipeline's standard (docs/process.md): fewer than 15 % of honest raters excluded
    # (SimLex rule (b) removes 10 % of the raters by construction, spammers first)
    assert len(out & honest) / len(honest) < 0.15
    assert len(out & spam) / len(spam) >= 0.9
    assert quit <= out                    # every rater who quit early, even over SimLex's cap
    if quitters:
        assert quit


def test_strict_duplicate_reading_excludes_most_honest_raters_who_forget(pairs):
    keys = {"rules": ["duplicate_inconsistency"]}
    out, honest, _, _ = outcome(pairs, "hyperlex", 1.0, 0.7, 0.0, 0.0, duplicate_max_ratio=0.0,
                                **keys)
    assert len(out & honest) / len(honest) > 0.5
    out, honest, _, _ = outcome(pairs, "hyperlex", 1.0, 0.7, 0.0, 0.0, **keys)
    assert len(out & honest) / len(honest) < 0.05
