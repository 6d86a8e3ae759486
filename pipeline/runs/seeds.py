"""Where the seeds of sampled games come from: a number for each ordered pairing of strategies
and for each rule set, mixed with a run's seed (numpy's SeedSequence) by the study runner
(pipeline.study.run) and the search ladder (pipeline.search_ladder.run). Keyed by the specs and the
rule set's name, a pairing's games do not depend on what else the run holds."""

from __future__ import annotations

import hashlib

import engine


def pairing_key(south: str, north: str) -> int:
    """A 128-bit number for an ordered pairing of specs: its games' seeds derive from it, so a
    strategy added to a study leaves the games of the other pairings as they were."""
    return int.from_bytes(hashlib.sha256(f"{south}\n{north}".encode()).digest()[:16], "little")


def rules_key(rules: engine.Rules) -> int:
    """A 128-bit number for a variant's rule set, from its name: the games of a variant do not
    depend on its label or on the other variants of the study."""
    return int.from_bytes(hashlib.sha256(f"rules\n{rules.name}".encode()).digest()[:16], "little")
