"""schedulers formats."""

FORMATS = ()
