"""Stated figures: exact, or approximate with half a unit in the last stated digit."""
from fractions import Fraction

import pytest

from grader.claims.figures import FigureError, parse_figure


@pytest.mark.parametrize("text, value, tol", [
    ("1,048,576", 1048576, 0),                          # exact: no ≈, no suffix, no decimals
    ("64", 64, 0),
    ("≈ 34.4B", 34_400_000_000, 50_000_000),            # last digit 0.1 B -> ± 0.05·10⁹
    ("≈ 1M", 1_000_000, 500_000),                       # last digit 1 M -> ± 0.5·10⁶
    ("≈ 16.8M", 16_800_000, 50_000),
    ("≈ 16.8 MB", 16_800_000, 50_000),                  # SI megabytes, in bytes
    ("16 MiB", 16 * 1024 * 1024, 0),                    # IEC, exact
    ("405B", 405_000_000_000, 500_000_000),             # a suffix makes it approximate
    ("≈ 68.8B FLOPs", 68_800_000_000, 50_000_000),      # counting words are ignored
])
def test_parse_figure(text, value, tol):
    f = parse_figure(text)
    assert f.value == value
    assert f.tolerance == tol


def test_matches_uses_the_implied_tolerance():
    f = parse_figure("≈ 34.4B")
    assert f.matches(2048 * 4096**2)                    # 34,359,738,368 is within 34.35..34.45 B
    assert not f.matches(8 * 2048 * 4096**2)            # 274,877,906,944 is not
    g = parse_figure("≈ 68.8B")
    assert not g.matches(2048 * 4096**2 + 2 * 2048**2 * 4096)   # 68,719,476,736 < 68.75 B
    assert parse_figure("≈ 16.8 MB").matches(256 * 128**2 * 4)  # 16,777,216 bytes ≥ 16.75 MB
    assert parse_figure("1,048,576").matches(Fraction(1048576))
    assert not parse_figure("1,048,576").matches(1050624)


@pytest.mark.parametrize("bad", ["", "about", "12,34", "3 parsecs", "16 m", True, "≈", "1e30 YB", "5 furlongs/s"])
def test_bad_figures_say_what_was_expected(bad):
    with pytest.raises(FigureError):
        parse_figure(bad)
