"""SPEC.md Versioning §4: "There is a dated changelog, newest first." CHANGELOG.md opens with
``## Unreleased`` (what has landed since the last release), then one ``## X.Y.Z — YYYY-MM-DD``
section per release, dates and versions descending; the newest release is the version the
distributions carry (and Versioning §1's interface version, 0.1.0, was the first)."""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

import callwright_client

ROOT = Path(__file__).resolve().parents[2]
RELEASE = re.compile(r"## (\d+)\.(\d+)\.(\d+) — (\d{4}-\d{2}-\d{2})")


def headings() -> list[str]:
    return [line.rstrip() for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("## ")]


def releases() -> list[tuple[tuple[int, int, int], date]]:
    found = []
    for heading in headings()[1:]:
        matched = RELEASE.fullmatch(heading)
        assert matched, f"not a release heading (## X.Y.Z — YYYY-MM-DD): {heading!r}"
        major, minor, patch, day = matched.groups()
        found.append(((int(major), int(minor), int(patch)), date.fromisoformat(day)))  # a real day, or ValueError
    return found


def test_unreleased_comes_first_then_dated_releases_newest_first() -> None:
    assert headings()[0] == "## Unreleased"
    found = releases()
    assert found, "no dated release"
    versions = [version for version, _ in found]
    days = [day for _, day in found]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions), versions
    assert days == sorted(days, reverse=True), days
    assert min(versions) == (0, 1, 0)  # Versioning §1: the interface version the first release had
    assert all(day <= date.today() for day in days), days


def test_the_newest_release_is_the_version_the_distributions_carry() -> None:
    found = releases()
    assert found, "no dated release"
    newest = ".".join(str(part) for part in found[0][0])
    server = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    client = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    assert newest == server == client["project"]["version"] == callwright_client.__version__
