"""File side of the translation workflow: reading and writing the sheets people fill in.

Sheets are UTF-8 CSV with a byte-order mark, so spreadsheet programs open Hebrew, Greek or
Cyrillic text correctly; files without the mark read the same. Cells are read as text: a word
such as ``null`` or ``NA`` stays a word.

Folder layout (see ``docs/languages.md``):

- ``lexgold translate export`` -> ``OUT/source.csv`` (English pairs with their stable
  ``pair_id``), ``OUT/<lang>_<translator>.csv`` (one sheet per translator),
  ``OUT/GUIDELINES.txt``
- ``lexgold translate import`` -> ``OUT/translations.csv``, ``OUT/agreement.json``,
  ``OUT/agreed.csv``, ``OUT/adjudication.csv``
- ``lexgold translate adjudicate`` -> ``OUT/aligned.csv``, ``OUT/dropped.csv``,
  ``OUT/report.json``
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd

from lexgold.errors import InputError
from lexgold.languages import translation
from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table
from lexgold.tables import read_text_table

GUIDELINES = """\
Translating word pairs for a rating study (lexgold translate export)
=====================================================================

You translate English word pairs that native speakers of your language will rate. Another
translator does the same sheet independently: do not consult each other.

1. Translate the PAIR, not two isolated words: the question column shows how the English pair
   is rated. Pick the sense of each word that the pair intends (bank + money: the institution).
2. Give one translation per word, the most common everyday word a native speaker would use.
3. Keep the part of speech (column pos: N noun, V verb, A adjective). If your language must use
   another part of speech, write it (N, V, A, R) in pos_translated; otherwise leave it empty.
4. Prefer a single word. Use a multi-word expression only when no single word exists.
5. Avoid translating both words of a pair by the same word. If your language has only one word
   for both, write it twice and explain in the comment column.
6. If a word cannot be translated, write NONE and explain in the comment column.
7. Do not change the columns pair_id, lang, translator, word1, word2, pos, question.
"""




def read_table(path: str | Path, required: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a CSV as text cells; check that ``required`` columns are present."""
    path = Path(path)
    frame = read_text_table(path)
    for column in required:
        if column not in frame.columns:
            raise InputError(f"missing column (needs {', '.join(required)})", path=path,
                             field=column)
    return frame


def write_table(frame: pd.DataFrame, path: Path, for_people: bool = False) -> Path:
    """Write ``frame`` as CSV (with a byte-order mark when people will open it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, encoding="utf-8-sig" if for_people else "utf-8",
                 quoting=csv.QUOTE_MINIMAL)
    return path


def write_plain_json(data: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_plain(data), indent=2, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def export_sheets(pairs_path, lang: str, out_dir, translators=("A", "B"),
                  protocol: str = "simlex", rng=None) -> list[Path]:
    """Write ``source.csv``, one sheet per translator and ``GUIDELINES.txt``; return the paths."""
    if len(set(translators)) < 2:
        raise InputError("need at least two different translators", field="translators")
    if not lang or "_" in lang or "/" in lang:
        raise InputError(f"language code {lang!r} must be non-empty without '_' or '/'",
                         field="lang")
    table = read_pair_table(pairs_path).rename(columns=PAIR_COLUMN_ALIASES)
    for column in ("word1", "word2"):
        if column not in table.columns:
            raise InputError("missing column (needs word1, word2, optional pos)",
                             path=pairs_path, field=column)
    if "pos" not in table.columns:  # TR9856 terms carry no POS
        table["pos"] = ""
    pairs = translation.assign_pair_ids(table, str(pairs_path))
    out = Path(out_dir)
    written = [write_table(pairs, out / "source.csv")]
    for label in translators:
        sheet = translation.translator_sheet(pairs, lang, label, protocol, rng)
        written.append(write_table(sheet, out / f"{lang}_{label}.csv", for_people=True))
    guidelines = out / "GUIDELINES.txt"
    guidelines.write_text(GUIDELINES, encoding="utf-8")
    return written + [guidelines]


def import_sheets(sheet_paths, out_dir) -> dict:
    """Compare translators' sheets; write translations, agreement, agreed and adjudication files.

    Returns the agreement report (also written to ``agreement.json``).
    """
    sheets = {str(p): translation.check_sheet(read_table(p), str(p)) for p in sheet_paths}
    wide, report = translation.compare_translations(sheets)
    out = Path(out_dir)
    write_table(wide, out / "translations.csv")
    write_table(translation.agreed_pairs(wide), out / "agreed.csv")
    write_table(translation.adjudication_sheet(wide), out / "adjudication.csv", for_people=True)
    write_plain_json(report, out / "agreement.json")
    return report


def adjudicate(agreed_path, adjudication_path, out_dir) -> dict:
    """Merge agreed pairs and the filled adjudication sheet; write the aligned pair set."""
    agreed = read_table(agreed_path, ("pair_id", "lang", "word1", "word2", "pos"))
    for column in ("multiword1", "multiword2", "collapsed", "pos_changed"):
        agreed[column] = agreed[column].map({"True": True, "False": False})
    adjudicated = read_table(adjudication_path, ("pair_id", "decision"))
    aligned, dropped = translation.apply_adjudication(agreed, adjudicated,
                                                      str(adjudication_path))
    report = translation.aligned_report(aligned, dropped)
    out = Path(out_dir)
    write_table(aligned, out / "aligned.csv")
    write_table(dropped, out / "dropped.csv")
    write_plain_json(report, out / "report.json")
    return report
