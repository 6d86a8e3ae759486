"""One integrity rule for every file the project reads back.

A file the project writes and later trusts carries, stored with it, the identity of what it
holds (its kind, the rule set, the strategy or pairing, the engine version: a small JSON
object) and a SHA-256 of its content; a reader names the identity it expects, and gets the
content only if both match:

    arrays (.npz)   the arrays, plus ``identity`` (the identity as canonical JSON) and
                    ``checksum``: SHA-256 of the identity, then of each array's name and bytes
                    in the order of their names          position tables, solutions, policies
    JSON            {"checksum": SHA-256 of the canonical JSON of the payload,
                     "payload": {..., "of": identity}}   exact outcomes, exploitabilities,
                                                         atlas rows, run manifests

Anything else at the path (a file of another kind, rule set or strategy copied over it, a
flipped bit, a file cut short, a file of an older release without the seal) is a
DamagedFileError in one line naming the path and what is wrong. A path that is not a regular
file (a FIFO, a device, a folder) is refused without being opened: opening a FIFO would wait
for a writer forever. What a caller does with a damaged file is its own: the caches rebuild it
with a warning, a run's folder refuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from engine.store.cache import write_atomic

Identity = Mapping[str, Any]
_SEAL = ("identity", "checksum")  # the names an arrays file keeps beside its arrays


class DamagedFileError(ValueError):
    """A file that does not hold what its reader asked for, or fails its checksum."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path} {problem}")
        self.path = path


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (following links); False when nothing is there.
    Anything else there (a FIFO, a socket, a device, a folder) is a DamagedFileError, decided
    without opening it."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISREG(mode):
        raise DamagedFileError(path, f"is {_file_kind(mode)}, not a regular file; remove it")
    return True


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a regular file, None when it is missing, not a regular file or unreadable."""
    try:
        if not regular_file(path):
            return None
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (OSError, DamagedFileError):
        return None


def sealed_identity(path: Path) -> dict[str, Any] | None:
    """The identity a sealed file (arrays for .npz, else JSON) says it holds, its checksum not
    checked (arrays are not read); None when ``path`` is no regular file carrying a seal."""
    try:
        if not regular_file(path):
            return None
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as stored:
                found = json.loads(str(stored["identity"])) if set(_SEAL) <= set(stored.files) else None
        else:
            stored = json.loads(path.read_bytes())
            found = stored["payload"]["of"] if isinstance(stored, dict) and "checksum" in stored else None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):  # DamagedFileError too
        return None
    return found if isinstance(found, dict) else None


# ---------------------------------------------------------------------------------------------
# Arrays


def write_arrays(path: Path, arrays: Mapping[str, np.ndarray], identity: Identity) -> None:
    """Write ``arrays`` to ``path`` (.npz, whole or not at all) sealed with ``identity``."""
    text = _canonical(identity)
    if set(arrays) & set(_SEAL):
        raise ValueError(f"an array may not be named {' or '.join(_SEAL)}")
    digest = _arrays_digest(text, arrays)
    stored: dict[str, Any] = {**arrays, "identity": np.array(text), "checksum": np.array(digest)}
    write_atomic(path, lambda handle: np.savez(handle, **stored))


def read_arrays(path: Path, identity: Identity, names: Iterable[str] | None = None) -> dict[str, np.ndarray] | None:
    """The arrays sealed in ``path`` with ``identity`` (those of ``names``, when given, must all be
    there); None when there is no file; DamagedFileError when it is anything else."""
    if not regular_file(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            if not set(_SEAL) <= set(stored.files):
                raise DamagedFileError(path, "carries no identity or checksum (written by an older modiar, or not ours)")
            found = json.loads(str(stored["identity"]))
            if found != identity:
                raise DamagedFileError(path, f"holds {describe(found)}, not {describe(identity)}")
            arrays = {name: stored[name] for name in stored.files if name not in _SEAL}
            expected = str(stored["checksum"])
    except (OSError, ValueError, KeyError, EOFError, NotImplementedError, zipfile.BadZipFile) as error:
        if isinstance(error, DamagedFileError):
            raise
        raise DamagedFileError(path, f"is unreadable ({_reason(error)})") from None
    if _arrays_digest(_canonical(identity), arrays) != expected:
        raise DamagedFileError(path, "fails its checksum (changed or damaged)")
    missing = sorted(set(names or ()) - set(arrays))
    if missing:
        raise DamagedFileError(path, f"lacks the arrays {', '.join(missing)}")
    return arrays


def _arrays_digest(identity_text: str, arrays: Mapping[str, np.ndarray]) -> str:
    digest = hashlib.sha256(identity_text.encode())
    for name in sorted(arrays):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(arrays[name]).reshape(-1).view(np.uint8).data)  # no copy of a large array
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# JSON


def sealed(payload: Mapping[str, Any], identity: Identity) -> dict[str, Any]:
    """``payload`` with ``identity`` as its "of", and its checksum: the JSON object a sealed
    file (or a line of a sealed journal) holds."""
    content = {**payload, "of": dict(identity)}
    return {"checksum": json_digest(content), "payload": content}


def unsealed(stored: object, identity: Identity, where: Path) -> dict[str, Any]:
    """The payload of a sealed JSON object (``sealed``) made for ``identity``, its "of" removed;
    DamagedFileError naming ``where`` otherwise."""
    if not isinstance(stored, dict) or not isinstance(stored.get("payload"), dict) or "checksum" not in stored:
        raise DamagedFileError(where, "carries no checksum (written by an older modiar, or edited)")
    payload: dict[str, Any] = stored["payload"]
    if json_digest(payload) != stored["checksum"]:
        raise DamagedFileError(where, "fails its checksum (changed or damaged)")
    if payload.get("of") != identity:
        raise DamagedFileError(where, f"holds {describe(payload.get('of'))}, not {describe(identity)}")
    return {key: value for key, value in payload.items() if key != "of"}


def write_json(path: Path, payload: Mapping[str, Any], identity: Identity, *, indent: int | None = None) -> None:
    """Write ``payload`` to ``path`` (whole or not at all) sealed with ``identity``."""
    write_atomic(path, (json.dumps(sealed(payload, identity), indent=indent) + "\n").encode())


def read_json(path: Path, identity: Identity) -> dict[str, Any] | None:
    """The payload sealed in ``path`` with ``identity``; None when there is no file;
    DamagedFileError when it is anything else."""
    if not regular_file(path):
        return None
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise DamagedFileError(path, f"is unreadable ({_reason(error)})") from None
    return unsealed(stored, identity, path)


def json_digest(content: object) -> str:
    """The SHA-256 of ``content`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def describe(identity: object) -> str:
    """An identity in words, its fields in the order of their names: 'the position tables of
    rules modiar-stones4 (engine 1)'."""
    if not isinstance(identity, Mapping) or not isinstance(identity.get("kind"), str):
        return "something unknown" if identity is None else f"{json.dumps(identity, sort_keys=True)[:120]}"
    rest = ", ".join(f"{key} {identity[key]}" for key in sorted(identity) if key not in ("kind", "engine"))
    engine = f" (engine {identity['engine']})" if "engine" in identity else ""
    return f"the {identity['kind']} of {rest}{engine}" if rest else f"a {identity['kind']}{engine}"


def _canonical(identity: Identity) -> str:
    return json.dumps(dict(identity), sort_keys=True)


def _reason(error: BaseException) -> str:
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return " ".join(str(text).split())[:160]


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a device or special file")
