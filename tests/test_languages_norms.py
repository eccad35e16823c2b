"""Association and concreteness norms from any cue-response-count / word-rating table."""

import numpy as np
import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.languages.norms import (association_strengths, read_association_norms,
                                     read_concreteness)


def test_strengths_hand_computed_without_total_column():
    table = pd.DataFrame({"cue": ["dog", "dog", "dog", "cat"],
                          "target": ["cat", "bone", "cat", "mouse"],
                          "n_participants": [3, 4, 3, 2]})
    out = association_strengths(table).set_index(["cue", "target"])
    # dog: cat 3+3 = 6 of 10 responses, bone 4 of 10; cat: mouse 2 of 2
    assert out.loc[("dog", "cat"), "fsg"] == 0.6 and out.loc[("dog", "bone"), "fsg"] == 0.4
    assert out.loc[("dog", "cat"), "n_group"] == 10 and out.loc[("cat", "mouse"), "fsg"] == 1.0
    # cat was normed as a cue and never gave dog: backward strength 0; bone never a cue: NaN
    assert out.loc[("dog", "cat"), "bsg"] == 0.0 and out.loc[("dog", "cat"), "normed"]
    assert np.isnan(out.loc[("dog", "bone"), "bsg"]) and not out.loc[("dog", "bone"), "normed"]


@pytest.fixture(scope="module")
def usf_as_swow(tmp_path_factory, usf):
    """The real USF norms written in the Small World of Words strength-file layout."""
    path = tmp_path_factory.mktemp("swow") / "strength.USF.R1.csv"
    pd.DataFrame({"cue": usf["cue"], "response": usf["target"], "R1": usf["n_participants"],
                  "N": usf["n_group"]}).to_csv(path, sep="\t", index=False)
    return path


def test_swow_layout_reproduces_usf_strengths(usf_as_swow, usf):
    norms = read_association_norms(usf_as_swow)
    assert len(norms) == len(usf)
    both = usf.merge(norms, on=["cue", "target"], suffixes=("_usf", ""))
    assert len(both) == len(usf)
    # USF prints FSG = #P / #G to three decimals; a few published values do not follow that
    close = (both["fsg_usf"] - both["fsg"]).abs() <= 0.0005 + 1e-9
    assert close.mean() > 0.95
    assert (both["normed_usf"] == both["normed"]).mean() > 0.9999
    present = both["bsg_usf"].notna() & both["bsg"].notna()
    assert ((both["bsg_usf"] - both["bsg"]).abs()[present] <= 0.0005 + 1e-9).mean() > 0.98


def test_association_columns_and_errors_are_named(tmp_path):
    path = tmp_path / "norms.csv"
    path.write_text("Cue,Resp,Count\nhund,katze,5\nhund,knochen,x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"norms.csv, field 'R1': no count column 'R1'"):
        read_association_norms(path, cue="Cue", response="Resp")
    with pytest.raises(InputError, match=r"norms.csv:3, field 'Count': not a number: 'x'"):
        read_association_norms(path, cue="Cue", response="Resp", count="Count", total=None)
    path.write_text("Cue;Resp;Count\nHund;Katze;5\nHund;Knochen;5\n", encoding="utf-8")
    out = read_association_norms(path, cue="Cue", response="Resp", count="Count", total=None,
                                 lowercase=True)
    assert out[["cue", "target", "fsg"]].values.tolist() == [["hund", "katze", 0.5],
                                                            ["hund", "knochen", 0.5]]


def test_concreteness_from_any_word_rating_table(tmp_path, brysbaert):
    path = tmp_path / "conc.csv"
    pd.DataFrame({"lemma": brysbaert["word"], "rating": brysbaert["conc_m"]}).to_csv(path, index=False)
    out = read_concreteness(path, word="lemma", rating="rating").set_index("word")["conc_m"]
    expected = brysbaert.assign(word=brysbaert["word"].str.lower()).drop_duplicates("word")
    assert len(out) == len(expected)
    assert np.allclose(out[expected["word"]].to_numpy(), expected["conc_m"].to_numpy())
    with pytest.raises(InputError, match=r"conc.csv:2, field 'rating': rating 4.85 outside the scale 1-4"):
        read_concreteness(path, word="lemma", rating="rating", scale=(1, 4))
