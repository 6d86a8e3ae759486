"""The report's layout: where the abstract, the contents, the appendix and the footer go in the
Markdown and the HTML; and a small study's index.html in a real browser, headless Chromium
(Debian's package), which draws it without a console message and, at a phone's width, without
the page overflowing sideways.

The browser tests are skipped, naming the package to install, where no chromium is on the PATH.
Each detector (console messages, overflow) is also tested on a page made to fail it, so a
change in Chromium's log format cannot turn the checks into ones that always pass.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from pipeline.cli import main
from pipeline.report.folder import publish_pages, staging
from pipeline.runs.records import read_study_manifest, scan_exact, scan_games
from pipeline.study.report import Report, Section, Table, compose, compute, markdown, page
from pipeline.study.report.render import publish

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on the PATH: install Debian's package (apt-get install chromium) to run the browser tests",
)
# Exact outcomes and a long strategy name: the report's widest tables (exact columns beside the
# sampled ones, twelve Ludii metrics).
CONFIG = """name = "browsed"
seed = 3
games_per_seat = 60
strategies = ["random", "greedy", "perfect(temperature=1.0)", "perfect"]
exact = true

[rules]
stones_per_pit = 3
"""
DESKTOP = (1280, 2400)  # the window, in CSS pixels: a laptop's screen
PHONE = 390  # a phone's width in CSS pixels; headless Chromium's window is at least 500 wide, hence the frame
# Chromium with --enable-logging=stderr logs each console message, a script's uncaught error
# included, as `[...:INFO:CONSOLE:12] "message", source: ...` (`CONSOLE(12)` in older versions).
CONSOLE = re.compile(r":CONSOLE(?:[(:]\d+\)?)?\]\s*(.*)")
# A page showing index.html in a frame a phone wide, then writing what overflows into its DOM.
PROBE = """<!DOCTYPE html>
<html><body><iframe id="page" src="{url}" style="width: {width}px; height: 800px; border: 0"></iframe>
<script>
window.addEventListener("load", () => {{
  const root = document.getElementById("page").contentDocument.documentElement;
  const wide = [...root.querySelectorAll("body > *, section > *")]
    .filter((element) => element.getBoundingClientRect().right > root.clientWidth + 0.5)
    .map((element) => element.tagName.toLowerCase() + (element.className ? "." + element.className : ""));
  const measured = document.createElement("output");
  measured.id = "measured";
  measured.textContent = JSON.stringify({{ scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide: wide }});
  document.body.append(measured);
}});
</script></body></html>
"""
# The same frame at a desktop's width, writing which tables scroll (hide columns) in their box.
TABLES = """<!DOCTYPE html>
<html><body style="margin: 0"><iframe id="page" src="{url}" style="width: {width}px; height: 800px; border: 0"></iframe>
<script>
window.addEventListener("load", () => {{
  const root = document.getElementById("page").contentDocument;
  const hidden = [...root.querySelectorAll(".scroll")]
    .filter((box) => box.scrollWidth > box.clientWidth + 0.5)
    .map((box) => box.querySelector("caption").textContent + ": " + box.scrollWidth + " > " + box.clientWidth);
  const measured = document.createElement("output");
  measured.id = "measured";
  measured.textContent = JSON.stringify(hidden);
  document.body.append(measured);
}});
</script></body></html>
"""


# ---------------------------------------------------------------------------------------------
# The layout, without a browser


def laid_out(**parts) -> Report:
    """A report of two main sections and two of the appendix, one titled as a heading of the
    report's own; ``parts`` (alarm, abstract, footer) added. Its data is never read."""
    header = ["pairing", "first-player score", "p", "what it means"]
    row = ["random v random", "0.464 [0.463, 0.465]", "< 0.001", "`capture`: a move captured stones, once per turn it fires"]
    table = Table("Outcomes", header, [row], "outcomes")
    sections = [
        Section("Headlines", ["The **first** player wins more often."]),
        Section("Full tables: outcomes", tables=[table], appendix=True),
        Section("Rule events, by ply", ["See [RULES.md](../../RULES.md)."]),
        Section("Appendix", ["A section titled as the report's own heading."], appendix=True),
    ]
    return Report("tiny", ["Study **tiny**: 10 games."], sections, data=None, **parts)  # type: ignore[arg-type]


def test_markdown_puts_abstract_contents_appendix_and_footer_in_order():
    text = markdown(laid_out(alarm=["POSSIBLE BUG"], abstract=["In plain words: South wins."], footer=["Made by **modiar**."]))
    order = [
        "# Study report: tiny",
        "**POSSIBLE BUG**",
        "## Abstract",
        "In plain words: South wins.",
        "Study **tiny**: 10 games.",
        "## Contents",
        "## Headlines",
        "## Rule events, by ply",
        "## Appendix",
        "### Full tables: outcomes",
        "### Appendix",
        "---",
        "Made by **modiar**.",
    ]
    lines = text.splitlines()
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)
    contents = lines[lines.index("## Contents") + 2 : lines.index("## Headlines") - 1]
    assert contents == [
        "- [Headlines](#headlines)",
        "- [Rule events, by ply](#rule-events-by-ply)",
        "- [Appendix](#appendix)",
        "  - [Full tables: outcomes](#full-tables-outcomes)",
        "  - [Appendix](#appendix-1)",
    ]
    assert "**Outcomes** (tables/outcomes.csv)\n\n| pairing | first-player score | p | what it means |" in text
    assert lines[lines.index("---") - 1] == ""  # not a heading underline


def test_html_puts_abstract_contents_appendix_and_footer_in_order(tmp_path):
    text = page(
        laid_out(
            alarm=["POSSIBLE BUG"],
            abstract=["In **plain** words."],
            footer=["Made by [modiar](../../README.md): `modiar study report`."],
        ),
        tmp_path,
    )
    order = [
        'class="alarm"',
        '<section class="abstract" id="abstract"><h2>Abstract</h2><p>In <strong>plain</strong> words.</p></section>',
        "<p>Study <strong>tiny</strong>: 10 games.</p>",
        '<nav class="contents" id="contents" aria-label="Contents"><h2>Contents</h2>',
        '<section id="headlines">\n<h2>Headlines</h2>',
        '<section id="rule-events-by-ply">\n<h2>Rule events, by ply</h2>',
        '<section class="appendix" id="appendix">\n<h2>Appendix</h2>',
        '<section id="full-tables-outcomes">\n<h3>Full tables: outcomes</h3>',
        '<section id="appendix-1">\n<h3>Appendix</h3>',
        '<footer><p>Made by <a href="../../README.md">modiar</a>: <code>modiar study report</code>.</p></footer>',
    ]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    links = re.findall(r'href="#([^"]+)"', text)
    assert links == ["headlines", "rule-events-by-ply", "appendix", "full-tables-outcomes", "appendix-1"]
    assert all(text.count(f'id="{anchor}"') == 1 for anchor in links)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text
    assert '<div class="scroll"><table><caption>Outcomes (tables/outcomes.csv)</caption>' in text
    # words left, numbers right, sentences may wrap
    assert '<td class="words">random v random</td><td>0.464 [0.463, 0.465]</td><td>&lt; 0.001</td>' in text
    assert '<td class="words prose"><code>capture</code>: a move captured stones, once per turn it fires</td>' in text
    assert re.search(r"td \{[^}]*white-space: nowrap", text)


def test_a_report_without_abstract_footer_or_appendix_gets_none_of_their_headings(tmp_path):
    plain = laid_out()
    plain.sections = [replace(section, appendix=False) for section in plain.sections if section.title != "Appendix"]
    text, html_page = markdown(plain), page(plain, tmp_path)
    assert "## Abstract" not in text and "## Appendix" not in text and "\n---\n" not in text and "###" not in text
    assert "Abstract" not in html_page and "<footer>" not in html_page and 'class="appendix"' not in html_page
    assert html_page.count("<h2>") == 1 + len(plain.sections)  # the contents' heading and the sections'


def test_the_ladders_pages_take_an_abstract_and_a_footer(tmp_path):
    out = tmp_path / "report"
    with staging(out) as folder:
        publish_pages(
            folder, out, "Skill ladder: small", ["Text."], [Section("Rungs")], {}, abstract=["Short."], footer=["Made."]
        )
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.index("## Abstract") < text.index("## Contents") < text.index("## Rungs") < text.index("---\n\nMade.")
    assert "<footer><p>Made.</p></footer>" in (out / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# In the browser


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """index.html of a small study's report, with an abstract, a footer and an appendix where
    compose gives none, so the browser sees every part of the layout."""
    folder = tmp_path_factory.mktemp("browsed")
    config = folder / "browsed.toml"
    config.write_text(CONFIG)
    study = folder / "study"
    assert main(["study", "run", str(config), "--out", str(study), "--quiet", "--jobs", "1"]) == 0
    manifest = read_study_manifest(study)
    report = compose(manifest, compute(scan_games(study), manifest, exact=scan_exact(study)))
    if not any(section.appendix for section in report.sections):
        report.sections[-1] = replace(report.sections[-1], appendix=True)
    report = replace(
        report,
        abstract=report.abstract or ["A small study, drawn in a browser: **three** strategies."],
        footer=report.footer or ["Made by the browser test, tests/pipeline/report/test_report_browser.py."],
    )
    out = folder / "report"
    with staging(out) as building:
        publish(building, out, report)
    return out / "index.html"


@needs_chromium
def test_the_report_draws_in_chromium_without_a_console_message(report_page, tmp_path):
    """The page has no script: any console message at all (an error, a failed load) is a fault."""
    screenshot = tmp_path / "desktop.png"
    log = chromium(tmp_path, report_page.as_uri(), f"--screenshot={screenshot}", "--window-size={},{}".format(*DESKTOP))
    assert console_messages(log) == []
    image = Image.open(screenshot).convert("RGB")
    assert image.size == DESKTOP
    colours = image.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 200, "the screenshot is nearly blank"
    white = max(count for count, colour in colours if colour == (255, 255, 255))
    assert white < 0.97 * DESKTOP[0] * DESKTOP[1], "the screenshot is nearly all white"


@needs_chromium
def test_the_console_check_sees_an_uncaught_error(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html><body><p>broken</p><script>throw new Error("deliberate")</script></body></html>')
    log = chromium(tmp_path, broken.as_uri(), f"--screenshot={tmp_path / 'broken.png'}", "--window-size=600,400")
    assert any("Uncaught Error: deliberate" in message for message in console_messages(log)), log[-3000:]


@needs_chromium
def test_the_report_fits_a_phone_width(report_page, tmp_path):
    measured = width_at_phone(tmp_path, report_page)
    assert measured["clientWidth"] <= PHONE
    assert measured["scrollWidth"] <= measured["clientWidth"], f"wider than the phone: {measured}"


@needs_chromium
def test_every_table_is_whole_at_a_desktop_width(report_page, tmp_path):
    """No table hides a column behind its box's scroll at a laptop's width: a header wraps
    between words and inside long names, and the page widens for tables (prose keeps its measure)."""
    assert "seat effect, exact" in report_page.read_text(encoding="utf-8")  # the widest tables are there
    assert tables_hidden_at(tmp_path, report_page, DESKTOP[0]) == []


@needs_chromium
def test_the_table_check_sees_a_table_too_wide(tmp_path):
    wide = tmp_path / "wide.html"
    cells = "".join(f"<td>{'9' * 20}</td>" for _ in range(12))
    wide.write_text(
        '<!DOCTYPE html><html><body><div class="scroll" style="overflow-x: auto"><table><caption>Too wide</caption>'
        f"<tr>{cells}</tr></table></div></body></html>"
    )
    assert [line.split(":")[0] for line in tables_hidden_at(tmp_path, wide, DESKTOP[0])] == ["Too wide"]


@needs_chromium
def test_the_width_check_sees_an_overflowing_page(tmp_path):
    wide = tmp_path / "wide.html"
    wide.write_text('<!DOCTYPE html><html><body><div class="too-wide" style="width: 1000px">wide</div></body></html>')
    measured = width_at_phone(tmp_path, wide)
    assert measured["scrollWidth"] > measured["clientWidth"] and measured["wide"] == ["div.too-wide"]


def chromium(tmp_path: Path, url: str, *options: str) -> str:
    """Run headless Chromium on ``url`` with ``options``; its log (stderr), or the stdout of --dump-dom."""
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",  # as root, and in containers without user namespaces
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *options,
        url,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"chromium failed ({result.returncode}): {result.stderr[-3000:]}"
    return result.stdout if "--dump-dom" in options else result.stderr


def console_messages(log: str) -> list[str]:
    """The console messages in Chromium's log, uncaught errors included."""
    return [match.group(1) for match in map(CONSOLE.search, log.splitlines()) if match]


def tables_hidden_at(tmp_path: Path, shown: Path, width: int) -> list[str]:
    """The tables of ``shown`` that scroll in their box in a frame ``width`` pixels wide: caption,
    scroll width > box width."""
    probe = tmp_path / "tables.html"
    probe.write_text(TABLES.format(url=html.escape(shown.as_uri()), width=width))
    window = f"--window-size={width + 100},900"
    dom = chromium(tmp_path, probe.as_uri(), "--allow-file-access-from-files", "--dump-dom", window)
    found = re.search(r'<output id="measured">(.*?)</output>', dom)
    assert found, f"the probe wrote nothing: {dom[-2000:]}"
    return list(json.loads(html.unescape(found.group(1))))


def width_at_phone(tmp_path: Path, shown: Path) -> dict[str, object]:
    """The scroll and client widths of ``shown`` in a frame PHONE pixels wide, and which of its
    blocks reach past the frame's right edge."""
    probe = tmp_path / "probe.html"
    probe.write_text(PROBE.format(url=html.escape(shown.as_uri()), width=PHONE))
    dom = chromium(tmp_path, probe.as_uri(), "--allow-file-access-from-files", "--dump-dom", "--window-size=800,900")
    found = re.search(r'<output id="measured">(.*?)</output>', dom)
    assert found, f"the probe wrote nothing: {dom[-2000:]}"
    return dict(json.loads(html.unescape(found.group(1))))
