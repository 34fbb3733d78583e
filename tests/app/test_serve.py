"""The server's start (gpu_ledger.app.serve): what a first page would import is imported before the
server listens, so its first visitor does not wait for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpu_ledger.app.server import APP
from tests.app.apptest import PAGES

# in a fresh interpreter: the preload, then every page once under AppTest; prints the packages the preload
# imported, "--", then the modules the pages imported
FIRST_PAGES = """
import sys
from streamlit.testing.v1 import AppTest
from gpu_ledger.app import serve

serve.preload()
before = set(sys.modules)
at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.run()
for page in sys.argv[2:]:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
print(*sorted({name.split(".")[0] for name in before}), "--", *sorted(set(sys.modules) - before))
"""


def test_after_the_preload_the_pages_import_only_the_apps_own_modules(home: Path):
    done = subprocess.run(
        [sys.executable, "-c", FIRST_PAGES, str(APP), *PAGES],
        env={**os.environ, "GPU_LEDGER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    preloaded, imported = (part.split() for part in done.stdout.split(" -- "))
    assert "gpu_ledger.app.data" in imported  # the app's own modules: the pages import them
    # a library's own later imports (pandas' pivot tables, Streamlit's elements) are theirs to make
    late = [
        name
        for name in imported
        if name.split(".")[0] not in preloaded
        or (name.startswith("gpu_ledger.") and not name.startswith("gpu_ledger.app."))
    ]
    assert not late, f"the server's preload (gpu_ledger.app.serve) leaves these to the first page: {late}"
