"""The one run-manifest schema of the builders (``report.json["manifest"]``).

Every builder (SimLex-999, HyperLex, TR9856) records what a run was made from in the same
shape (docs/builders.md, "Reproducibility"):

- ``lexgold_version``, ``seed``;
- ``protocol``: ``{"name", "file", "sha256"}`` of the protocol file;
- ``settings``: the effective ``[build]`` settings;
- ``resources``: per input, a list of ``{"file", "sha256"}`` (file names, never folders; a
  vendored file also has ``expected_sha256``);
- ``libraries``: versions of the libraries the result depends on.

:func:`read_manifest` reads this schema and the older TR9856 one (``inputs`` with ``path``,
``protocol.path``), so ``lexgold process`` still reads the manifests of earlier builds.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from lexgold import __version__
from lexgold.compression import read_input_json

#: the libraries every builder's output depends on
LIBRARIES = ("nltk", "numpy", "pandas", "scipy")


def run_manifest(protocol: dict, seed: int, settings: dict, resources: dict[str, list[dict]],
                 libraries: tuple[str, ...] = LIBRARIES) -> dict:
    """What a build was made from, in the one schema above.

    Parameters
    ----------
    protocol : dict
        A loaded protocol (:func:`lexgold.protocols.load_protocol`: ``_path``, ``_sha256``).
    seed : int
        The run's seed.
    settings : dict
        The effective ``[build]`` settings.
    resources : dict
        Input name -> list of ``{"file", "sha256", ...}``.
    libraries : tuple of str
        Distributions whose versions are recorded.

    Examples
    --------
    >>> m = run_manifest({"name": "x", "_path": "/p/x.toml", "_sha256": "ab"}, 3, {}, {},
    ...                  libraries=())
    >>> m["protocol"], m["seed"], m["libraries"]
    ({'name': 'x', 'file': 'x.toml', 'sha256': 'ab'}, 3, {})
    """
    return {
        "lexgold_version": __version__,
        "protocol": {"name": protocol.get("name"), "file": Path(protocol["_path"]).name,
                     "sha256": protocol["_sha256"]},
        "settings": settings,
        "seed": seed,
        "resources": resources,
        "libraries": {name: metadata.version(name) for name in libraries},
    }


def read_manifest(data) -> dict | None:
    """A builder manifest in the current schema; the older TR9856 layout is converted.

    The older TR9856 layout had ``inputs: {name: {"path", "sha256"}}`` and
    ``protocol: {"path", "sha256"}``; it becomes ``resources: {name: [{"file", "sha256"}]}``
    and ``protocol: {"name": None, "file", "sha256"}``. Anything that is not a dict is None.

    Examples
    --------
    >>> old = {"seed": 1, "protocol": {"path": "tr9856.toml", "sha256": "ab"},
    ...        "inputs": {"topics": {"path": "/data/topics.txt", "sha256": "cd"}}}
    >>> new = read_manifest(old)
    >>> new["resources"], new["protocol"]["file"], new["settings"]
    ({'topics': [{'file': 'topics.txt', 'sha256': 'cd'}]}, 'tr9856.toml', {})
    """
    if not isinstance(data, dict):
        return None
    if "inputs" not in data:
        return data
    out = {key: value for key, value in data.items() if key != "inputs"}
    out["resources"] = {name: [{"file": _name(item.get("path", "")),
                                "sha256": item.get("sha256")}]
                        for name, item in data["inputs"].items() if isinstance(item, dict)}
    protocol = data.get("protocol") or {}
    if "path" in protocol:
        out["protocol"] = {"name": protocol.get("name"), "file": _name(protocol["path"]),
                           "sha256": protocol.get("sha256")}
    out.setdefault("settings", {})
    out.setdefault("libraries", {})
    return out


def _name(path: str) -> str:
    return Path(str(path).replace("\\", "/")).name


def manifest_beside(pairs_path) -> dict | None:
    """The run manifest of the builder that wrote ``pairs_path`` (its ``report.json`` beside it),
    or None; read at ``study create`` (kept in the study) and by ``process --pairs``.

    A translation's ``aligned.csv`` (``lexgold translate adjudicate``, docs/languages.md) has
    no builder run: its ``report.json`` counts the aligned pairs, and the manifest is
    ``{"aligned": {"file", "lang", "pairs", "by_origin", "flags", "dropped"}}``.
    """
    if not pairs_path:
        return None
    path = Path(pairs_path).parent / "report.json"
    try:
        data = read_input_json(path, what="report.json")
    except (OSError, ValueError):          # InputError too: not there, not JSON, a FIFO
        return None
    if not isinstance(data, dict):
        return None
    if "manifest" not in data and {"lang", "pairs", "by_origin"} <= set(data):
        return {"aligned": {"file": _name(str(pairs_path)),
                            **{key: data.get(key) for key in ("lang", "pairs", "by_origin",
                                                              "flags", "dropped")}}}
    return read_manifest(data.get("manifest"))
