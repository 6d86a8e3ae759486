"""Reading and editing sealed files (engine.store.integrity) in tests: a test that spoils a field of a
manifest re-seals it, so that it reaches the check of that field and not the seal's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.store.integrity import sealed
from pipeline.runs.paths import MANIFEST


def payload(path: Path) -> dict[str, Any]:
    """What a sealed JSON file holds, its identity ("of") removed."""
    content: dict[str, Any] = json.loads(path.read_text())["payload"]
    return {key: value for key, value in content.items() if key != "of"}


def edit_sealed(path: Path, change: Callable[[dict[str, Any]], object], *, reseal: bool = True) -> None:
    """Apply ``change`` to the payload of a sealed JSON file; ``reseal`` False leaves the old
    checksum, as a hand edit would."""
    stored = json.loads(path.read_text())
    content = {key: value for key, value in stored["payload"].items() if key != "of"}
    change(content)
    if reseal:
        stored = sealed(content, stored["payload"]["of"])
    else:
        stored["payload"] = {**content, "of": stored["payload"]["of"]}
    path.write_text(json.dumps(stored, indent=1) + "\n")


def manifest(folder: Path) -> dict[str, Any]:
    return payload(folder / MANIFEST)


def edit_manifest(folder: Path, change: Callable[[dict[str, Any]], object], *, reseal: bool = True) -> None:
    edit_sealed(folder / MANIFEST, change, reseal=reseal)
