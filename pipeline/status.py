"""How far a study folder got: ``modiar study status DIR``."""

from __future__ import annotations

from pathlib import Path

from pipeline.records import RecordError, read_manifest
from pipeline.runner import chunk_done, plan
from pipeline.study import ConfigError, parse_study


def status(directory: Path) -> str:
    """Chunks done of all planned (a chunk counts when its files match their checksums),
    games recorded, and per ordered pairing the games recorded of those planned."""
    manifest = read_manifest(directory)
    try:
        study = parse_study(manifest["config"])
    except ConfigError as error:
        raise RecordError(f"{directory}: the manifest's config is not a study config ({error})") from None
    chunks = plan(study)
    done = [chunk for chunk in chunks if chunk_done(directory, manifest, chunk, study.keep_plies)]
    games = sum(map(len, done))
    several = bool(study.variants)
    rule_sets = ", ".join(f"{variant.label} ({variant.rules.name})" for variant in study.rule_sets()) if several else ""
    lines = [
        f"study {study.name} in {directory}: {len(done)} of {len(chunks)} chunks done, "
        f"{games:,} of {study.total_games():,} games, rules {rule_sets or study.rules.name}",
        f"  {'variant':<24}{'south':<24}{'north':<24}{'games':>12}{'of':>12}"
        if several
        else f"  {'south':<24}{'north':<24}{'games':>12}{'of':>12}",
    ]
    for pairing in study.pairings():
        played = sum(len(chunk) for chunk in done if chunk.pairing == pairing)
        variant = f"{pairing.variant:<24}" if several else ""
        lines.append(f"  {variant}{pairing.south:<24}{pairing.north:<24}{played:>12,}{pairing.games:>12,}")
    return "\n".join(lines)
