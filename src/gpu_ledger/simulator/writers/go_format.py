"""Numbers printed as Go prints them, for the simulator's Prometheus and dcgm-exporter writers.

Prometheus' JSON codec writes a sample's value with `strconv.AppendFloat(v, 'f', -1)`, dcgm-exporter's
text a double field with `%f`; both are reproduced here, vectorised, so that what writers.prometheus
writes is byte for byte what the real services print.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["format_prometheus_values", "go_fixed6"]


def format_prometheus_values(values: np.ndarray) -> pl.Series:
    """Format float64 values exactly as Prometheus' JSON codec does (`strconv.AppendFloat(v, f, -1)`).

    Go writes the shortest digits that round-trip, in plain positional form unless |v| < 1e-6 or
    |v| >= 1e21, where it switches to `d.ddde±XX` (at least two exponent digits). Polars' own cast
    already yields the shortest round-trip digits (Ryu) but in a different layout (`37.0`, `1e+16`,
    `1e-7`), so the common case only needs the `.0` suffix stripped and the rare exponent-form
    strings are re-laid out with string kernels. NaN is not expected here (callers drop gaps).
    """
    v = np.ascontiguousarray(values, dtype=np.float64)
    if _all_plain_integers(v):
        return pl.Series("v", v.astype(np.int64)).cast(pl.Utf8)
    text = pl.Series("v", v).cast(pl.Utf8)
    rare = np.flatnonzero(text.str.contains("e", literal=True).to_numpy())
    text = text.str.strip_suffix(".0")
    if rare.size:
        fixed = pl.DataFrame({"v": v[rare], "raw": text.gather(rare)}).select(
            _relayout_exponent_form(pl.col("raw"), pl.col("v")).alias("v")
        )["v"]
        text = text.scatter(rare, fixed)
    return text


def _all_plain_integers(v: np.ndarray) -> bool:
    """Whether every value is a whole number Go prints as its integer digits (no -0, below 1e15).

    Why: integer counters and gauges are most of the telemetry, and printing them as int64 skips
    the float layout's passes; below 1e15 a whole float64 is exact and Go prints its digits as is.
    """
    return bool(
        np.all(np.abs(v) < 1e15) and np.all(np.trunc(v) == v) and not np.any(np.signbit(v) & (v == 0))
    )


def _relayout_exponent_form(raw: pl.Expr, value: pl.Expr) -> pl.Expr:
    """Turn Polars' `[-]d[.ddd]e[+-]N` into Go's layout for the same digits.

    Why a separate path: Polars switches to exponent form at other magnitudes than Go, so a value
    such as 5.5e-6 or 1e16 must become positional (`0.0000055`, `10000000000000000`) while 1e-7
    must keep the exponent but with Go's two-digit padding (`1e-07`).
    """
    negative = raw.str.starts_with("-")
    body = raw.str.strip_prefix("-")
    mantissa = body.str.split_exact("e", 1).struct.field("field_0")
    exponent = body.str.split_exact("e", 1).struct.field("field_1").str.strip_prefix("+").cast(pl.Int32)
    digits = mantissa.str.replace(".", "", literal=True)
    n_digits = digits.str.len_chars().cast(pl.Int32)
    magnitude = value.abs()
    go_exponent_form = (magnitude < 1e-6) | (magnitude >= 1e21)

    exp_text = pl.concat_str(
        [
            mantissa,
            pl.lit("e"),
            pl.when(exponent < 0).then(pl.lit("-")).otherwise(pl.lit("+")),
            exponent.abs().cast(pl.Utf8).str.zfill(2),
        ]
    )
    # Positional, exponent < 0: "0." then (-exponent - 1) zeros then the digits.
    small = pl.concat_str([pl.lit("0."), digits.str.zfill((n_digits - exponent - 1).clip(0))])
    # Positional, exponent >= 0: integer part padded with zeros, fraction only if digits remain.
    int_len = (exponent + 1).clip(0)
    int_part = digits.str.slice(0, int_len).str.pad_end(int_len, "0")
    frac_part = digits.str.slice(int_len)
    large = pl.when(frac_part.str.len_bytes() > 0).then(pl.concat_str([int_part, pl.lit("."), frac_part]))
    large = large.otherwise(int_part)
    positional = pl.when(exponent < 0).then(small).otherwise(large)
    unsigned = pl.when(go_exponent_form).then(exp_text).otherwise(positional)
    return pl.when(negative).then(pl.concat_str([pl.lit("-"), unsigned])).otherwise(unsigned)


def go_fixed6(values: np.ndarray) -> pl.Series:
    """Go's `%f` (six decimals, correctly rounded, ties to even), vectorised.

    The fast path rounds v*1e6 in float arithmetic; that product is inexact, so values whose
    scaled fraction sits within rounding error of .5 (and magnitudes beyond exact integer range)
    are re-done with Python's `%f`, which rounds the exact binary value the same way Go does.
    """
    v = np.asarray(values, dtype=np.float64)
    scaled = v * 1e6
    frac = np.abs(scaled - np.trunc(scaled))
    tolerance = np.abs(scaled) * 4.5e-16 + 1e-12
    exact_needed = (np.abs(frac - 0.5) <= tolerance) | ~(np.abs(v) < 1e9)
    micro = np.rint(np.where(exact_needed, 0.0, scaled)).astype(np.int64)
    magnitude = np.abs(micro)
    out = pl.DataFrame(
        {
            "neg": np.signbit(v),
            "whole": magnitude // 1_000_000,
            "frac": magnitude % 1_000_000,
        }
    ).select(
        pl.concat_str(
            [
                pl.when(pl.col("neg")).then(pl.lit("-")).otherwise(pl.lit("")),
                pl.col("whole").cast(pl.Utf8),
                pl.lit("."),
                pl.col("frac").cast(pl.Utf8).str.zfill(6),
            ]
        ).alias("v")
    )["v"]
    fix = np.flatnonzero(exact_needed)
    if fix.size:
        # Only near-ties and huge magnitudes: a handful per million values.
        out = out.scatter(fix, ["%f" % x for x in v[fix].tolist()])  # noqa: UP031
    return out
