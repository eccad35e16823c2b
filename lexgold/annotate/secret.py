"""The session-signing key of the rating site, kept out of the study database.

Flask signs each session cookie (a rater's public ID and browser secret, an admin token) with
this key. Before lexgold's revision 0010 it was stored in the study itself, so anyone who could
read the database (a backup, a shared folder) could sign a session. It now comes from, in order:

1. ``lexgold serve --secret-key-file FILE`` (or ``LEXGOLD_SECRET_KEY_FILE=FILE``);
2. ``LEXGOLD_SECRET_KEY`` (the key itself, at least :data:`MIN_LENGTH` characters);
3. for a SQLite study, the key file next to it, ``study.sqlite.key`` (:func:`default_key_file`),
   written by ``lexgold study create`` and ``lexgold study secret STUDY``.

A key file is refused when anyone but its owner and group may read it. Several hosts serving one
study must share one key (copy the file, or the variable). Without any key, ``serve`` on loopback
(or ``--check``) makes one for this run only: everyone is logged out when it restarts.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

from lexgold.errors import InputError

#: the shortest key accepted (characters; ``lexgold study secret`` writes 64 hex digits)
MIN_LENGTH = 32
ENV_KEY, ENV_FILE = "LEXGOLD_SECRET_KEY", "LEXGOLD_SECRET_KEY_FILE"


def new_key() -> str:
    """A fresh random key: 256 bits as 64 hex digits."""
    return secrets.token_hex(32)


def default_key_file(study: str | Path) -> Path | None:
    """``study.sqlite.key`` for a SQLite file ``study.sqlite``; None for a database URL."""
    text = str(study)
    if "://" in text:
        url = make_url(text)
        if not url.drivername.startswith("sqlite") or not url.database or \
                url.database == ":memory:":
            return None
        text = url.database
    return Path(text).with_name(Path(text).name + ".key")


def write_key_file(path: str | Path, *, force: bool = False) -> Path:
    """Write a new key to ``path``, readable by its owner only (mode 0600).

    An existing file is kept unless ``force`` (a new key logs every rater and admin out)."""
    path = Path(path)
    if path.exists() and not force:
        raise InputError(f"{path} exists (a new key logs every rater and admin out: --force)",
                         field="out")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    descriptor = os.open(path, flags, 0o600)
    try:
        os.fchmod(descriptor, 0o600)          # an existing file keeps its mode otherwise
        os.write(descriptor, (new_key() + "\n").encode())
    finally:
        os.close(descriptor)
    return path


def read_key_file(path: str | Path) -> str:
    """The key in ``path``; refused when others may read the file or the key is too short."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        key = path.read_text(encoding="utf-8").strip()
    except OSError as err:
        raise InputError(f"cannot read the key file {path}: {err.strerror}",
                         field="secret-key-file") from None
    if mode & stat.S_IRWXO:
        raise InputError(f"the key file {path} is readable by others: chmod 600 {path}",
                         field="secret-key-file")
    return _checked(key, str(path))


def _checked(key: str, source: str) -> str:
    if len(key) < MIN_LENGTH:
        raise InputError(f"the session-signing key in {source} is too short ({len(key)} "
                         f"characters, at least {MIN_LENGTH}; make one with `lexgold study "
                         "secret`)", field="secret-key")
    return key


def find_key(study: str | Path, key_file: str | Path | None = None,
             environ=None) -> tuple[str, str] | None:
    """The session-signing key for ``study`` and where it came from, or None when none is set.

    ``key_file`` (``--secret-key-file``) first, then ``LEXGOLD_SECRET_KEY_FILE``,
    ``LEXGOLD_SECRET_KEY``, then a SQLite study's own key file."""
    environ = os.environ if environ is None else environ
    key_file = key_file or environ.get(ENV_FILE)
    if key_file:
        return read_key_file(key_file), str(key_file)
    if environ.get(ENV_KEY):
        return _checked(environ[ENV_KEY].strip(), ENV_KEY), ENV_KEY
    default = default_key_file(study)
    if default is not None and default.exists():
        return read_key_file(default), str(default)
    return None


def how_to_make(study: str) -> str:
    """The one line that says how to give ``serve`` a key for ``study``."""
    if default_key_file(study) is not None:
        return f"run `lexgold study secret {study}` (writes {default_key_file(study)})"
    return ("run `lexgold study secret --out FILE` and serve with --secret-key-file FILE "
            f"(or set {ENV_FILE} or {ENV_KEY})")
