"""The optional parts of modiar-lab (pyproject.toml's extras) and the packages each needs.

    dask        --backend dask of ``modiar study run`` and ``modiar atlas run``: dask.distributed
    notebooks   ``python -m pipeline.notebooks`` (``make notebooks``), and Jupyter for notebooks/

``pip install .`` installs neither. No module of engine/ or pipeline/ imports their packages at
module level (tests/pipeline/runs/test_extras.py), so the ``modiar`` command and the engine run without them;
what needs one calls ``require`` first, which names the extra to install in one line.
"""

from __future__ import annotations

import importlib.util

EXTRAS = {"dask": ("distributed",), "notebooks": ("nbclient", "nbformat", "ipykernel")}


class MissingExtraError(ImportError):
    """A package of an extra is not installed; the message says which extra installs it."""


def require(extra: str, purpose: str) -> None:
    """Raise MissingExtraError, one line naming ``purpose`` and the pip command, when a package of
    ``extra`` is not installed."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        packages, clone = " and ".join(missing), f"pip install -e '.[{extra}]' in a clone"
        raise MissingExtraError(f"{purpose} needs {packages}, not installed here: pip install 'modiar-lab[{extra}]' (or {clone})")
