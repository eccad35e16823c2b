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

``lexgold study upgrade`` of a study made before revision 0010 keeps the key the study held in
the key file, on a second line ``legacy KEY until TIME`` (:func:`keep_legacy_key`), for
:data:`LEGACY_DAYS` days (a session cookie's lifetime): the site then reads the rater (and its
browser secret) from a cookie signed with it, and from nothing else in it, so raters who started
before the upgrade continue where they were (:func:`lexgold.annotate.views_rater.legacy_rater`).
Every cookie the site sets is signed with the new key; an old copy of the database, which holds
the old key, can sign no admin session and no move of a rater bound to a browser.

The same key keys the hashes of what the database keeps of a rater's credentials
(:func:`keyed_hash`, revision 0014): the session ID of the rater's own platform link (Prolific
``SESSION_ID``, MTurk ``assignmentId``) and the admin view's move links. A copy of the database
alone gives neither; a new key (``study secret --force``) voids them with the sessions.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.engine import make_url

from lexgold.compression import read_input_text
from lexgold.errors import InputError

#: the shortest key accepted (characters; ``lexgold study secret`` writes 64 hex digits)
MIN_LENGTH = 32
ENV_KEY, ENV_FILE = "LEXGOLD_SECRET_KEY", "LEXGOLD_SECRET_KEY_FILE"
#: days a key the study held before revision 0010 is still read from old cookies (the
#: session lifetime: no cookie it signed is older)
LEGACY_DAYS = 14


def keyed_hash(key: str, value: str) -> str:
    """HMAC-SHA256 of ``value`` (hex) under a key derived from the session-signing ``key``
    (RFC 2104; the derivation keeps the two uses apart): what the study database stores of a
    credential, compared with :func:`hmac.compare_digest`.

    >>> digest = keyed_hash("k" * 32, "session01")
    >>> len(digest), digest == keyed_hash("k" * 32, "session01")
    (64, True)
    >>> digest == keyed_hash("j" * 32, "session01")
    False
    """
    derived = hmac.new(key.encode(), b"lexgold stored credentials", hashlib.sha256).digest()
    return hmac.new(derived, value.encode(), hashlib.sha256).hexdigest()


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
    _write_private(path, new_key() + "\n")
    return path


def _write_private(path: Path, content: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    descriptor = os.open(path, flags, 0o600)
    try:
        os.fchmod(descriptor, 0o600)          # an existing file keeps its mode otherwise
        os.write(descriptor, content.encode())
    finally:
        os.close(descriptor)


def read_key_file(path: str | Path) -> str:
    """The key in ``path``; refused when others may read the file or the key is too short."""
    return _checked(_key_lines(path)[0], str(path))


def _key_lines(path: str | Path) -> list[str]:
    """The non-empty lines of a key file (the key first); refused when others may read it."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        lines = [line.strip() for line in read_input_text(path, encoding="utf-8").splitlines()]
    except OSError as err:
        raise InputError(f"cannot read the key file {path}: {err.strerror}",
                         field="secret-key-file") from None
    if mode & stat.S_IRWXO:
        raise InputError(f"the key file {path} is readable by others: chmod 600 {path}",
                         field="secret-key-file")
    return [line for line in lines if line] or [""]


def read_legacy_key(path: str | Path) -> tuple[str, datetime] | None:
    """The key a study held before revision 0010 and until when (naive UTC) it is read, from
    the key file's ``legacy KEY until TIME`` line; None without one."""
    for line in _key_lines(path)[1:]:
        parts = line.split()
        if len(parts) == 4 and parts[0] == "legacy" and parts[2] == "until":
            try:
                until = datetime.fromisoformat(parts[3].removesuffix("Z"))
            except ValueError:
                break
            return parts[1], until.replace(tzinfo=None)
    return None


def keep_legacy_key(path: str | Path, old_key: str, now: datetime | None = None) -> datetime:
    """Keep ``old_key`` (the key a study held before revision 0010) in the key file ``path``
    for :data:`LEGACY_DAYS` days, making the file with a new key when there is none; returns
    until when (naive UTC). A key file's own key is kept (it may be shared by several hosts)."""
    path = Path(path)
    key = read_key_file(path) if path.exists() else new_key()
    until = (now or datetime.now(UTC).replace(tzinfo=None)) + \
        timedelta(days=LEGACY_DAYS)
    _write_private(path, f"{key}\nlegacy {old_key} until "
                         f"{until.replace(microsecond=0).isoformat()}Z\n")
    return until


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
    source = key_source(study, key_file, environ)
    if source is None:
        return None
    if source == ENV_KEY:
        environ = os.environ if environ is None else environ
        return _checked(environ[ENV_KEY].strip(), ENV_KEY), ENV_KEY
    return read_key_file(source), str(source)


def key_source(study: str | Path, key_file: str | Path | None = None,
               environ=None) -> str | Path | None:
    """Where :func:`find_key` takes the key from: a key file's path, :data:`ENV_KEY`, or
    None."""
    environ = os.environ if environ is None else environ
    key_file = key_file or environ.get(ENV_FILE)
    if key_file:
        return key_file
    if environ.get(ENV_KEY):
        return ENV_KEY
    default = default_key_file(study)
    if default is not None and default.exists():
        return default
    return None


def how_to_make(study: str) -> str:
    """The one line that says how to give ``serve`` a key for ``study``."""
    if default_key_file(study) is not None:
        return f"run `lexgold study secret {study}` (writes {default_key_file(study)})"
    return ("run `lexgold study secret --out FILE` and serve with --secret-key-file FILE "
            f"(or set {ENV_FILE} or {ENV_KEY})")
