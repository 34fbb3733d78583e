"""events formats."""

FORMATS = ()
