"""A report's folder on disk, built safely: the report is built in a staging folder beside its
own and moved into place whole, so a failure never leaves half a report over a good one. Every
report's folder holds a marker (MARKER: the run's name, the engine's version and every file the
report wrote, sealed by engine.store.integrity), and a report replaces only a folder that is empty or
holds a report of ours and nothing but the files its marker lists: never the run's folder, nor
a folder holding a file of the user's (notes.png beside the figures included). A staging folder
carries the marker from its start, so the staging and old folders of a report killed mid-write
are told from a user's folder named like them: the next report written beside them removes
them, and only them (and empty ones).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import polars as pl

from engine.store import ENGINE_VERSION, DamagedFileError, pid_in, process_running, read_json, write_json
from pipeline.report.document import Document, Section, markdown, page
from pipeline.runs.records import RecordError

MARKER = ".modiar-report"  # in every report's folder, JSON: only a folder holding it is ever replaced


def check_out(study: Path, out: str | Path) -> Path:
    """``out`` resolved, if the report of ``study`` may go there: a folder that does not exist,
    is empty or holds a report of ours (MARKER) and nothing else; never the study's folder, a
    folder inside it or one that holds it. Raises RecordError otherwise."""
    if str(out) == "":
        raise RecordError("the report's folder (--out) is empty: name a folder, e.g. --out reports/mine")
    try:
        target, data = Path(out).resolve(), study.resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop
        raise RecordError(f"{out} cannot be the report's folder: {error}") from None
    if target == data or target.is_relative_to(data) or data.is_relative_to(target):
        raise RecordError(f"{out} is, holds or lies in the study's folder {study}; choose an --out outside it")
    _check_replaceable(target, str(out))
    return target


def check_report_out(out: str | Path) -> Path:
    """``out`` resolved, if a report that reads no run folder (the fairness search's) may go
    there: a folder that does not exist, is empty or holds a report of ours and nothing else."""
    if str(out) == "":
        raise RecordError("the report's folder (--out) is empty: name a folder, e.g. --out reports/mine")
    try:
        target = Path(out).resolve()
    except (OSError, RuntimeError) as error:
        raise RecordError(f"{out} cannot be the report's folder: {error}") from None
    _check_replaceable(target, str(out))
    return target


@contextmanager
def staging(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to build the report in, made first (a folder that cannot be
    written fails before the work), marked as a report's at once, and removed afterwards
    whatever happens, with the parents of ``out`` it made if they stay empty."""
    folder = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    made: list[Path] = []
    staged = False
    try:
        try:
            _make_folders(out.parent, made)
            _remove_stale_folders(out)
            _clear_the_way(folder)
            folder.mkdir()
            staged = True
            write_marker(folder, out.name)
        except OSError as error:
            raise write_error(out, error) from None
        yield folder
    finally:
        if staged:
            shutil.rmtree(folder, ignore_errors=True)
        for parent in reversed(made):
            with suppress(OSError):  # not empty: the report is in it
                parent.rmdir()


def publish_pages(
    staging: Path,
    out: Path,
    title: str,
    text: Sequence[str],
    sections: Sequence[Section],
    tables: dict[str, pl.DataFrame],
    *,
    abstract: Sequence[str] = (),
    footer: Sequence[str] = (),
    manifest: dict[str, Any] | None = None,
) -> None:
    """Write a report other than a study's (the skill ladder's) into ``staging``, whose figures/
    its caller has drawn, and move it to ``out``: its CSV tables, Markdown, HTML and marker.
    ``abstract`` and ``footer`` are laid out as a study report's are. A ``manifest`` (what made
    the report) is written as manifest.json with the SHA-256 of every other file the report
    wrote: the form in which a report is published, to be checked file by file."""
    document = Document(title, text, sections, abstract=abstract, footer=footer)
    try:
        folder = staging / "tables"
        folder.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            table.write_csv(folder / f"{name}.csv")
        (staging / "report.md").write_text(markdown(document), encoding="utf-8")
        (staging / "index.html").write_text(page(document, staging / "figures"), encoding="utf-8")
        if manifest is not None:
            write_published_manifest(staging, manifest)
        write_marker(staging, title)
        replace_folder(staging, out)
    except OSError as error:
        raise write_error(out, error) from None


PUBLISHED_MANIFEST = "manifest.json"  # a published report's: what made it, every file's SHA-256
_MARKER_IDENTITY = {"kind": "report folder"}  # what the marker says it is (engine.store.integrity)
_LITTER = (".DS_Store", "Thumbs.db")  # what file browsers leave in a folder they show


def write_published_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """manifest.json: ``manifest`` with "files", the SHA-256 of every file in ``folder``."""
    files = {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in (PUBLISHED_MANIFEST, MARKER)
    }
    text = json.dumps({**manifest, "files": files}, indent=1, sort_keys=False) + "\n"
    (folder / PUBLISHED_MANIFEST).write_text(text, encoding="utf-8")


def check_published(folder: Path) -> dict[str, Any]:
    """A published report's manifest, once every file it lists is checked against its SHA-256
    (RecordError naming the first that differs or is missing)."""
    manifest: dict[str, Any] = json.loads((folder / PUBLISHED_MANIFEST).read_text(encoding="utf-8"))
    for name, digest in manifest["files"].items():
        path = folder / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise RecordError(f"{path} is not the file {folder / PUBLISHED_MANIFEST} lists")
    return manifest


def write_marker(folder: Path, title: str) -> None:
    """The marker, written last: the run's name, the engine's version and every file written."""
    files = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file() and path != folder / MARKER)
    write_json(folder / MARKER, {"study": title, "engine_version": ENGINE_VERSION, "files": files}, _MARKER_IDENTITY)


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, outermost first, adding each to ``made``."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def write_error(out: Path, error: OSError) -> RecordError:
    return RecordError(f"cannot write the report to {out}: {error.strerror or error}")


def replace_folder(staging: Path, out: Path) -> None:
    """Move the built report to ``out``; the report it replaces is deleted only once the new
    one is in place, and put back if the move fails."""
    _check_replaceable(out, str(out))  # again: the folder may have been filled while we computed
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    _clear_the_way(old)
    if out.exists():
        out.rename(old)
    try:
        staging.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _check_replaceable(target: Path, name: str) -> None:
    try:
        if not target.is_dir():
            if os.path.lexists(target):
                raise RecordError(f"{name} exists and is not a folder; choose another --out")
            return
        if not any(target.iterdir()):
            return
        if not _is_report(target):
            why = (
                "holds a report whose marker is damaged or of an earlier modiar (it lists no files)"
                if os.path.lexists(target / MARKER)
                else "exists and is not a report of modiar"
            )
            raise RecordError(f"{name} {why}; choose another --out or remove it")
        foreign = _foreign_files(target)
    except OSError as error:
        raise RecordError(f"cannot use {name} as the report's folder: {error.strerror or error}") from None
    if foreign:
        raise RecordError(
            f"{name} holds files the report did not write ({', '.join(foreign[:3])}); move them away or choose another --out"
        )


def _remove_stale_folders(out: Path) -> None:
    """The staging and old folders of reports of ``out`` whose writer is gone (killed mid-write)."""
    for suffix in ("tmp", "old"):
        for folder in out.parent.glob(f".{glob.escape(out.name)}.{suffix}-*"):
            pid = pid_in(folder.name.rpartition(f".{suffix}-")[2])
            if pid is not None and not process_running(pid):
                _remove_if_ours(folder)


def _clear_the_way(folder: Path) -> None:
    """Remove what stands at ``folder``, a staging or old folder's name of this process, if it
    is a report's (a process of this pid before, killed); RecordError if it is anything else."""
    if os.path.lexists(folder) and not _remove_if_ours(folder):
        raise RecordError(f"{folder} is in the way of the report and is not a report of modiar's; move it away")


def _remove_if_ours(folder: Path) -> bool:
    """Remove ``folder`` if it is a report's (its marker sound: a report's, or a staging folder's)
    or empty; a user's folder merely named like one stays. Whether nothing is left there."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    if _is_report(folder):
        shutil.rmtree(folder, ignore_errors=True)
    else:
        with suppress(OSError):  # not empty: not ours
            folder.rmdir()
    return not os.path.lexists(folder)


def _is_report(folder: Path) -> bool:
    return _written_files(folder) is not None


def _written_files(folder: Path) -> set[str] | None:
    """The files the report in ``folder`` wrote, as its marker lists them; None when the folder
    holds no sound marker of ours (a marker of an earlier release lists no files: none either)."""
    try:
        marker = read_json(folder / MARKER, _MARKER_IDENTITY)
    except DamagedFileError:
        return None
    files = None if marker is None else marker.get("files")
    if not isinstance(files, list) or not all(isinstance(name, str) for name in files):
        return None
    return {*files, MARKER}


def _foreign_files(folder: Path) -> list[str]:
    """What in a report's folder the report did not write (a reader's notes, say): replacing
    the folder would lose it."""
    written = _written_files(folder) or set()
    found = (str(path.relative_to(folder)) for path in folder.rglob("*") if not path.is_dir() or path.is_symlink())
    return sorted(name for name in found if name not in written and Path(name).name not in _LITTER)
