"""The figure formats of the tests' reports: SVG only (conftest sets it for the session and the
processes it starts), every format where a test checks the files users get."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from pipeline.report.figures import FORMATS, FORMATS_VARIABLE

DRAFT = "svg"


@contextmanager
def every_figure_format() -> Iterator[None]:
    """Figures saved in every format, as users get them."""
    os.environ[FORMATS_VARIABLE] = ",".join(FORMATS)
    try:
        yield
    finally:
        os.environ[FORMATS_VARIABLE] = DRAFT
