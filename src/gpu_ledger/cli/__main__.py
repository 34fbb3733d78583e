"""`python -m gpu_ledger.cli`: the `gpu-ledger` command."""

import sys

from gpu_ledger.cli import main

sys.exit(main())
