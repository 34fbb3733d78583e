"""billing formats."""

FORMATS = ()
