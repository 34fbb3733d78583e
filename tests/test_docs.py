"""The documentation lives in the repository: docs/ builds as a site with every page in its navigation and
no broken link between pages, and nothing in the code, models, tests or docs cites a design document kept
outside the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = "shared/" + "design"  # spelled in two parts so that this file does not cite it


def test_the_docs_build_strictly(tmp_path: Path):
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {path.stem for path in (REPO / "docs").glob("*.md")}
    assert {"interface", "adding", "operations", "style", "testing"} <= pages
    site = tmp_path / "site"
    assert all((site / ("" if page == "index" else page) / "index.html").exists() for page in pages)


def test_nothing_cites_a_document_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    citing = [
        name
        for name in tracked.stdout.splitlines()
        if (REPO / name).is_file() and OUTSIDE in (REPO / name).read_text(errors="ignore")
    ]
    assert not citing, citing
