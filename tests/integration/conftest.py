"""The real SMTP server the notify tests deliver to, for the real Slurm cluster's mail program."""

from tests.notify.conftest import smtp  # noqa: F401 (a fixture)
