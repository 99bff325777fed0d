"""MkDocs hooks (``mkdocs.yml``): the results' own pages join the site as they are, each at a
path of its own, with the figures they show, and the math of every page is typeset.

``results/README.md`` (how the records were made, and the findings), ``results/SCORECARD.md``
(the reproduction scorecard, ``make scorecard``) and the benchmarks' ``results/bench/**/*.md``
(``scripts/bench_*.py``); the site renders these files, so their numbers have one owner and the
documentation links to them rather than copying them (``docs/results.md``,
``docs/performance.md``). ``results/README.md`` would build to ``results/index.html``, the path
of ``docs/results.md``: it is served as ``results/findings/`` instead, and a build in which two
pages still share one output file fails.

The pages and the docstrings write math in TeX, ``$...$`` inline and ``$$`` blocks
(``pymdownx.arithmatex``); each is converted to MathML here, which browsers render without a
script or a font to fetch, so the site needs no network to build or to read.
"""

import html
import re
from pathlib import Path

from latex2mathml.converter import convert
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

#: the results' pages, relative to the repository root, as the site serves them
RESULT_PAGES = ("results/README.md", "results/SCORECARD.md", "results/bench/**/*.md")
#: the report's figures, which the results' pages show
RESULT_FIGURES = "results/*/*/figures/*.png"
#: the pages served at another path than their own (whose own is another page's)
MOVED = {"results/README.md": "results/findings/index.html"}
#: TeX as ``pymdownx.arithmatex`` (``generic: true``) leaves it: ``\(...\)`` in a span, ``\[...\]``
#: in a div
TEX = re.compile(r'<(span|div) class="arithmatex">\\[(\[](.*?)\\[)\]]</\1>', re.S)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the files ``RESULT_PAGES`` matches to the site's files, under the same paths (those of
    ``MOVED`` under theirs); refuse two pages that build to one output file.

    The report's figures (``RESULT_FIGURES``) come along at their paths, so that a page of the
    results shows one as GitHub does, by its path relative to the page (``results/README.md``:
    ``![Fig. 6](paper/published/figures/fig6_depth.png)``)."""
    root = Path(config.config_file_path).parent
    for pattern in (*RESULT_PAGES, RESULT_FIGURES):
        for found in sorted(root.glob(pattern)):
            path = found.relative_to(root).as_posix()
            files.append(
                File(
                    path,
                    str(root),
                    config.site_dir,
                    use_directory_urls=config.use_directory_urls,
                    dest_uri=MOVED.get(path),
                )
            )
    sources: dict[str, list[str]] = {}
    for file in files.documentation_pages():
        sources.setdefault(file.dest_uri, []).append(file.src_uri)
    clashes = [f"{', '.join(src)} -> {dest}" for dest, src in sources.items() if len(src) > 1]
    if clashes:
        raise PluginError(f"pages that build to one file: {'; '.join(clashes)}")
    return files


def on_page_content(content: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """The page's HTML with its TeX (pages and docstrings alike) as MathML."""
    return TEX.sub(
        lambda tex: convert(
            html.unescape(tex.group(2)), display="block" if tex.group(1) == "div" else "inline"
        ),
        content,
    )
