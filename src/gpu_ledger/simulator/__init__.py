"""Fleet simulator: a realistic GPU fleet's month in the real upstream formats, with its ground truth."""
