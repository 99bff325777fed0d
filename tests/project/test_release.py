"""The release files agree with the package: one version, a changelog entry for it, a license."""

import re
from pathlib import Path

import yaml

import lipnorm_exp

REPO = Path(__file__).resolve().parents[2]


def test_citation_names_the_package_version_and_the_paper():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert str(citation["version"]) == lipnorm_exp.__version__
    assert citation["license"] == "MIT"
    paper = citation["preferred-citation"]
    assert paper["title"].startswith("Lipschitz Normalization for Self-Attention Layers")
    assert [author["family-names"] for author in paper["authors"]] == [
        "Dasoulas",
        "Scaman",
        "Virmaux",
    ]


def test_the_changelog_has_an_entry_for_the_package_version():
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$",
                          (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)  # fmt: skip
    assert versions[0] == lipnorm_exp.__version__
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))), reverse=True)


def test_the_license_is_the_mit_text_the_package_declares():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert 'license = { file = "LICENSE" }' in (REPO / "pyproject.toml").read_text()
