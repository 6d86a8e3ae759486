"""The one build step pyproject.toml cannot say: ship the repository's RULES.md inside the
``pipeline`` package (pipeline/RULES.md of the wheel), so that an installed copy's reports carry
the rules they cite (pipeline.runs.paths.rules_md). Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithRules(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install imports the clone, whose RULES.md rules_md finds beside it
        target = Path(self.build_lib) / "pipeline"
        self.mkpath(str(target))
        self.copy_file(str(Path(__file__).parent / "RULES.md"), str(target / "RULES.md"))


setup(cmdclass={"build_py": BuildWithRules})
