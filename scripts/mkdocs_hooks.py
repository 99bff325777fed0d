"""MkDocs hooks (``mkdocs.yml``): the results' own pages join the site as they are.

``results/README.md`` (how the records were made, and the findings), ``results/SCORECARD.md``
(the reproduction scorecard, ``make scorecard``) and the benchmarks' ``results/bench/**/*.md``
(``scripts/bench_*.py``); the site renders these files, so their numbers have one owner and the
documentation links to them rather than copying them (``docs/results.md``,
``docs/performance.md``).
"""

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

#: the results' pages, relative to the repository root, as the site serves them
RESULT_PAGES = ("results/README.md", "results/SCORECARD.md", "results/bench/**/*.md")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the files :data:`RESULT_PAGES` matches to the site's files, under the same paths."""
    root = Path(config.config_file_path).parent
    for pattern in RESULT_PAGES:
        for page in sorted(root.glob(pattern)):
            files.append(
                File(
                    page.relative_to(root).as_posix(),
                    str(root),
                    config.site_dir,
                    use_directory_urls=config.use_directory_urls,
                )
            )
    return files
