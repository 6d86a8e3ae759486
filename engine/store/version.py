"""The engine's version: it goes into every record and cache key, and changes when the
engine's behaviour changes (the games a seed means, a rule), not for a speed-up."""

ENGINE_VERSION = "1"
