"""benchmarks/scale.py's line through two sizes: the fixed part and the per-row slope it projects from."""

from __future__ import annotations

import pytest

from benchmarks.scale import fit


def test_fit_gives_the_fixed_part_and_the_slope() -> None:
    line = fit((1_000_000, 30.0), (3_000_000, 50.0))
    assert line.per_row == pytest.approx(1e-5)
    assert line.fixed == pytest.approx(20.0)
    assert line.at(10_000_000) == pytest.approx(120.0)


def test_fit_reads_the_sizes_in_either_order() -> None:
    line = fit((3_000_000, 50.0), (1_000_000, 30.0))
    assert (line.fixed, line.per_row) == pytest.approx((20.0, 1e-5))


def test_two_sizes_of_the_same_rows_are_refused() -> None:
    with pytest.raises(ValueError, match="different row counts"):
        fit((1_000, 3.0), (1_000, 4.0))
