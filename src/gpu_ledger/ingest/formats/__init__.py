"""One module per upstream format family; each exposes FORMAT (or FORMATS) for the registry."""
