"""business formats."""

FORMATS = ()
