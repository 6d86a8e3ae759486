"""One protocol for the folder of every run: a study's, a ladder's, an atlas's.

    <folder>/manifest.json   what the folder holds: the run's name, config and versions, and its
                             files with their SHA-256; sealed (engine.store.integrity) as the manifest
                             of this kind of run and name
    <folder>/.modiar.lock    held by the one run writing the folder (pipeline.runs.lock)

A run claims its folder (``claim``): the folder must be missing, empty, or hold the manifest of
the same kind of run with the same config. The run then holds the folder's lock and clears the
temporary files a killed run left (engine.store.write_atomic's), in the folder and in the
subfolders its kind names. Readers (``read_manifest``) check the seal and the kind, and that the
run's name, which names the folder of its report, is a folder name and nothing more. A manifest
written before manifests were sealed is read by ``claim`` alone, which checks the files it lists
as a run always does and then seals it; every other reader refuses it in one line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.store import DamagedFileError, regular_file, remove_stale_temporaries, temporary_files, unsealed, write_json
from pipeline.runs.lock import folder_lock
from pipeline.runs.paths import LOCK, MANIFEST, NAME_RULE, is_name

log = logging.getLogger(__name__)


class RecordError(ValueError):
    """Records on disk that do not match their manifest or the run asked for."""


@dataclass(frozen=True)
class RunKind:
    """A kind of run: the manifest's key for the run's name, its command and its subfolders."""

    name: str  # "study", "ladder", "atlas" or "search ladder"
    command: str
    folders: tuple[str, ...] = ()  # subfolders of files written whole (write_atomic)

    def identity(self, name: object) -> dict[str, object]:
        """What the manifest of the run ``name`` of this kind says it holds."""
        return {"kind": f"{self.name} manifest", "name": name}

    @property
    def article(self) -> str:
        return "an" if self.name[:1] in "aeiou" else "a"


STUDY = RunKind("study", "modiar study run", ("games", "plies"))
LADDER = RunKind("ladder", "modiar ladder run")
ATLAS = RunKind("atlas", "modiar atlas run", ("rows",))
SEARCH_LADDER = RunKind("search ladder", "modiar ladder search")
KINDS = (STUDY, LADDER, ATLAS, SEARCH_LADDER)


def read_manifest(directory: Path, kind: RunKind, *, legacy: bool = False) -> dict[str, Any]:
    """The manifest of ``kind``'s run in ``directory``, its seal, kind and name checked;
    RecordError in one line otherwise. ``legacy``: an unsealed manifest of an earlier release
    is returned too (for ``claim``, which checks its files)."""
    path = directory / MANIFEST
    if os.path.lexists(directory) and not directory.is_dir():
        raise RecordError(f"{directory} is not a folder: name the folder {kind.article} '{kind.command}' wrote")
    try:
        found = regular_file(path)
    except DamagedFileError as error:
        raise RecordError(f"{error}; is {directory} {kind.article} {kind.name} folder?") from None
    if not found:
        raise RecordError(f"{path} not found: is {directory} {kind.article} {kind.name} folder written by '{kind.command}'?")
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise RecordError(
            f"{path} is not a readable manifest ({_reason(error)}); run '{kind.command}' again into a new folder"
        ) from None
    manifest = _legacy(stored, kind, path) if legacy and _is_legacy(stored) else _unseal(stored, kind, path)
    name = manifest.get(kind.name)
    if not is_name(name):
        raise RecordError(f"{path}: the {kind.name} name {name!r:.80} is not a folder name ({NAME_RULE})")
    config = manifest.get("config")
    if not isinstance(config, dict):
        raise RecordError(f"{path}: 'config' must be a JSON object, not {config!r:.60}")
    if config.get("name") != name:
        raise RecordError(f"{path}: its config is not the config of the {kind.name} {name}")
    return manifest


def read_listed_manifest(directory: Path, kind: RunKind) -> dict[str, Any]:
    """The manifest of a run that lists its files with their checksums (a ladder's, an atlas's),
    read as ``read_manifest`` reads it, and refused in one line if it lists none."""
    manifest = read_manifest(directory, kind)
    if not isinstance(manifest.get("files"), dict):
        raise RecordError(f"{directory / MANIFEST} lists no files; run '{kind.command}' again into a new folder")
    return manifest


def is_sealed(directory: Path) -> bool:
    """Whether the folder's manifest carries a seal (it may still fail it: read_manifest checks)."""
    try:
        return regular_file(directory / MANIFEST) and "checksum" in json.loads((directory / MANIFEST).read_bytes())
    except (OSError, ValueError, TypeError):  # DamagedFileError included: not a regular file
        return False


def write_manifest(directory: Path, kind: RunKind, manifest: dict[str, Any]) -> None:
    """Write the manifest whole, sealed as the manifest of ``kind``'s run named in it."""
    write_json(directory / MANIFEST, manifest, kind.identity(manifest[kind.name]), indent=1)


@contextmanager
def claim(directory: Path, kind: RunKind, config: dict[str, Any]) -> Iterator[None]:
    """Hold ``directory`` for a run of ``kind`` with ``config`` for the block: refused
    (RecordError, nothing written) when it holds anything but that run's files, or another run
    holds it (FolderBusyError); made when missing; the temporary files of a killed run cleared.
    A block that ends before writing a manifest (a failed start) leaves nothing it made."""
    check_own_folder(directory, kind, config)
    made = [path for path in (*reversed(directory.parents), directory) if not path.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RecordError(f"cannot write the {kind.name} to {directory}: {error.strerror or error}") from None
    try:
        with folder_lock(directory, kind.command):
            clear_litter(directory, kind)
            yield
    finally:
        if made and not (directory / MANIFEST).exists():
            _remove_made(directory, made)


def check_own_folder(directory: Path, kind: RunKind, config: dict[str, Any]) -> None:
    """Refuse (RecordError) a folder that holds something other than the files of ``kind``'s run
    with ``config``: a folder is written only when it is missing, empty (but for its lock and a
    killed run's temporary files), or holds the manifest of the same config."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise RecordError(f"{directory} exists and is not a folder; choose another --out")
    litter = {path.name for path in temporary_files(directory)}
    names = {path.name for path in directory.iterdir()} - {LOCK} - litter
    if not names:
        return
    if MANIFEST not in names:
        raise RecordError(f"{directory} is not empty and holds no {kind.name}; choose another --out")
    _check_kind(directory, kind)
    if read_manifest(directory, kind, legacy=True)["config"] != json.loads(json.dumps(config)):  # JSON: tuples are lists
        raise RecordError(
            f"{directory} holds the {kind.name} of another config; choose another --out, or remove the folder to compute it anew"
        )


def clear_litter(directory: Path, kind: RunKind) -> None:
    """Remove the temporary files a killed run left (under the folder's lock: no run is writing)."""
    for folder in (directory, *(directory / name for name in kind.folders)):
        remove_stale_temporaries(folder)


def _remove_made(directory: Path, made: list[Path]) -> None:
    """Remove the lock and the empty folders a failed start made, innermost first."""
    (directory / LOCK).unlink(missing_ok=True)
    for folder in (directory, *directory.parents):
        if folder not in made:
            return
        try:
            folder.rmdir()
        except OSError:  # not empty: something of its own is in it
            return


def _check_kind(directory: Path, kind: RunKind) -> None:
    """A folder of another kind of run gets a message that says so."""
    for other in KINDS:
        if other is kind:
            continue
        try:
            read_manifest(directory, other, legacy=True)
        except RecordError:
            continue
        raise RecordError(
            f"{directory} holds {other.article} {other.name} (written by '{other.command}'), not {kind.article} {kind.name}; "
            "choose another --out"
        )


def _unseal(stored: object, kind: RunKind, path: Path) -> dict[str, Any]:
    payload = stored.get("payload") if isinstance(stored, dict) else None
    of = payload.get("of") if isinstance(payload, dict) else None
    found = of.get("kind") if isinstance(of, dict) else None
    if isinstance(found, str) and found != kind.identity(None)["kind"]:
        other = found.removesuffix(" manifest")
        raise RecordError(f"{path} is the manifest of {_article(other)} {other}, not of {kind.article} {kind.name}")
    name = of.get("name") if isinstance(of, dict) else None
    try:
        return unsealed(stored, kind.identity(name), path)
    except DamagedFileError as error:
        raise RecordError(f"{error}; run '{kind.command}' again into a new folder") from None


def _is_legacy(stored: object) -> bool:
    return isinstance(stored, dict) and "checksum" not in stored and isinstance(stored.get("config"), dict)


def _legacy(stored: dict[str, Any], kind: RunKind, path: Path) -> dict[str, Any]:
    if kind.name not in stored:
        raise RecordError(f"{path} is not the manifest of {kind.article} {kind.name}")
    log.warning("%s carries no checksum (written by an earlier release): its files are checked and it is sealed now", path)
    return stored


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _reason(error: BaseException) -> str:
    return " ".join(str(getattr(error, "strerror", None) or error).split())[:120]
