"""Units and dimensions (issue #27): a figure in the wrong unit never holds. Every expected value is
derived by hand here (never read from the code under test)."""
from fractions import Fraction

import pytest

from grader.claims.figures import parse_figure
from grader.claims.load import load_subject
from grader.claims.run import run_subject
from grader.errors import ErrorList
from spec_helpers import HEADER, claim, write_spec

# Symbols with units beside the header's plain counts (d, h, n, b, n_kv).
H = HEADER.replace("symbols:\n", "symbols:\n"
                   "  L: {positive: true, integer: true}\n"
                   "  g: {positive: true, integer: true}\n"
                   "  d_ff: {positive: true, integer: true}\n"
                   "  V: {positive: true, integer: true}\n"
                   "  P: {positive: true, integer: true, unit: parameters}\n"
                   "  p: {positive: true, unit: bytes/parameter}\n"
                   "  F: {positive: true, unit: TFLOP/s}\n"
                   "  W: {positive: true, unit: TB/s}\n"
                   "  M: {positive: true, unit: GB}\n"
                   "  x: {positive: true}\n")
LLAMA = "{d: 4096, h: 32, d_ff: 11008, L: 32, V: 32000}"
LLAMA_SETTINGS = "activation: swiglu, norm: rmsnorm, bias: false, tied: false"


def run(tmp_path, *claims, header=H):
    subject = load_subject(write_spec(tmp_path, *claims, header=header))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def load_errors(tmp_path, *claims, header=H):
    with pytest.raises(ErrorList) as e:
        load_subject(write_spec(tmp_path, *claims, header=header))
    return [str(x) for x in e.value.errors]


def evidence(r):
    return " | ".join(c.summary for c in r.checks)


# ------------------------------------------------------------------ the silent cases of the issue

def test_each_silent_dimension_error_of_the_issue_is_refuted_with_its_reason(tmp_path):
    r = run(tmp_path,
            # Llama 2 7B: 6,738,415,616 parameters, claimed as 6.74 GB
            claim("params-as-gb", "refuted", [f'{{kind: measure, quantity: params.model, at: {LLAMA}, '
                                              f'{LLAMA_SETTINGS}, claimed: "6.74 GB"}}']),
            # the four projections at d=4096, n=2048: 8·2048·4096² = 274,877,906,944 FLOPs, claimed as 274.9 GB
            claim("flops-as-gb", "refuted", ['{kind: measure, quantity: flops.projections, '
                                             'at: {d: 4096, h: 32, n: 2048}, claimed: "274.9 GB"}']),
            # KV cache per token of Llama 2 7B at fp16: 2·32·4096·2 = 524,288 bytes, claimed as parameters
            claim("bytes-as-params", "refuted", ['{kind: measure, quantity: bytes.kv_cache_token, '
                                                 'at: {d: 4096, h: 32, L: 32}, dtype: fp16, '
                                                 'claimed: "524,288 parameters"}']),
            # F/B: 989 TFLOP/s over 3.35 TB/s ≈ 295.2 FLOP/byte, claimed as bytes
            claim("ratio-as-bytes", "refuted", ['{kind: numeric, expr: "F/W", at: {F: 989, W: 3.35}, '
                                                'claimed: "295.2 bytes"}']),
            # "Llama 2 7B needs 6.7 GB in fp16" checked against the parameter count
            claim("fp16-vs-params", "refuted", ['{kind: numeric, expr: "P", at: {P: 6738415616}, claimed: "6.7 GB"}']))
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "refuted")
    assert "the text states bytes where params.model counts parameters" in evidence(r["params-as-gb"])
    assert "the text states bytes where flops.projections counts FLOPs" in evidence(r["flops-as-gb"])
    assert "the text states parameters where bytes.kv_cache_token counts bytes" in evidence(r["bytes-as-params"])
    assert "the text states bytes where the expression is in FLOPs per byte" in evidence(r["ratio-as-bytes"])
    assert "the text states bytes where the expression counts parameters" in evidence(r["fp16-vs-params"])


def test_the_right_units_hold_and_the_conversions_are_shown(tmp_path):
    r = run(tmp_path,
            # 6,738,415,616 parameters × 2 bytes = 13,476,831,232 bytes ≈ 13.5 GB
            claim("fp16-bytes", "holds", ['{kind: numeric, expr: "P*p", at: {P: 6738415616, p: 2}, claimed: "≈ 13.5 GB"}']),
            claim("fp16-wrong", "refuted", ['{kind: numeric, expr: "P*p", at: {P: 6738415616, p: 2}, claimed: "6.7 GB"}']),
            # 989·10¹² / 3.35·10¹² = 295.22… FLOP/byte
            claim("ridge", "holds", ['{kind: numeric, expr: "F/W", at: {F: 989, W: 3.35}, claimed: "≈ 295 FLOP/byte"}']),
            # 13.5·10⁹ bytes / 3.35·10¹² bytes/s = 0.0040298… s ≈ 4.03 ms
            claim("time", "holds", ['{kind: numeric, expr: "M/W", at: {M: 13.5, W: 3.35}, claimed: "≈ 4.03 ms"}']),
            claim("time-in-bytes", "refuted", ['{kind: numeric, expr: "M/W", at: {M: 13.5, W: 3.35}, claimed: "4.03 MB"}']),
            # 128 KiB = 131,072 bytes: GiB and GB kept apart
            claim("kib", "holds", ['{kind: numeric, expr: "M", at: {M: 0.000131072}, claimed: "128 KiB"}']),
            claim("kib-vs-kb", "refuted", ['{kind: numeric, expr: "M", at: {M: 0.000131072}, claimed: "128 kB"}']))
    assert {k: v.verdict for k, v in r.items()} == {
        "fp16-bytes": "holds", "fp16-wrong": "refuted", "ridge": "holds", "time": "holds",
        "time-in-bytes": "refuted", "kib": "holds", "kib-vs-kb": "refuted"}
    assert "= 13,476,831,232 bytes" in evidence(r["fp16-bytes"])
    assert "(= 0.00403 ± 0.000005 s)" in evidence(r["time"])
    assert "the text states bytes where the expression is in seconds" in evidence(r["time-in-bytes"])


def test_a_bare_number_is_compared_by_value_as_before(tmp_path):
    # no unit on the figure: 6,738,415,616 parameters stated as "≈ 6.74B" holds (±5M)
    r = run(tmp_path, claim("bare", "holds", [f'{{kind: measure, quantity: params.model, at: {LLAMA}, '
                                              f'{LLAMA_SETTINGS}, claimed: "≈ 6.74B"}}']),
            # an expression none of whose symbols has a unit: a figure's unit is not checked
            claim("plain", "holds", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1 MiB"}']))
    assert {k: v.verdict for k, v in r.items()} == {"bare": "holds", "plain": "holds"}


# ------------------------------------------------------------------ unit spellings

@pytest.mark.parametrize("text, value, dim", [
    ("5 ms", Fraction(5, 1000), (("second", 1),)),
    ("20 µs", Fraction(20, 10**6), (("second", 1),)),
    ("20 us", Fraction(20, 10**6), (("second", 1),)),
    ("2 s", 2, (("second", 1),)),
    ("989 TFLOPS", 989 * 10**12, (("flop", 1), ("second", -1))),
    ("989 TFLOP/s", 989 * 10**12, (("flop", 1), ("second", -1))),
    ("312 TFLOPs/s", 312 * 10**12, (("flop", 1), ("second", -1))),
    ("3.35 TB/s", Fraction(335, 100) * 10**12, (("byte", 1), ("second", -1))),
    ("900 GB/s", 900 * 10**9, (("byte", 1), ("second", -1))),
    ("2 GiB/s", 2 * 2**30, (("byte", 1), ("second", -1))),
    ("30 tokens/s", 30, (("token", 1), ("second", -1))),
    ("295 ops/byte", 295, (("flop", 1), ("byte", -1))),
    ("156 FLOP/byte", 156, (("flop", 1), ("byte", -1))),
    ("512 bytes/token", 512, (("byte", 1), ("token", -1))),
    ("0.5 MB/token", 500_000, (("byte", 1), ("token", -1))),
    ("1 GB/token", 10**9, (("byte", 1), ("token", -1))),
    ("1 GiB", 2**30, (("byte", 1),)),
    ("1 GB", 10**9, (("byte", 1),)),
    ("7B parameters", 7 * 10**9, (("parameter", 1),)),
    ("34.4B FLOPs", 344 * 10**8, (("flop", 1),)),
    ("4096 tokens", 4096, (("token", 1),)),
    ("1,048,576", 1048576, None),
])
def test_every_unit_spelling_reads(text, value, dim):
    f = parse_figure(text)
    assert (f.value, f.dimension) == (value, dim)


def test_symbol_units_and_check_units_read_every_spelling(tmp_path):
    from grader.claims.dimensions import parse_unit
    assert parse_unit("TFLOP/s")[1:] == ((("flop", 1), ("second", -1)), 10**12)
    assert parse_unit("bytes/parameter")[1:] == ((("byte", 1), ("parameter", -1)), 1)
    assert parse_unit("GiB/token")[1:] == ((("byte", 1), ("token", -1)), 2**30)
    assert parse_unit("ms")[1:] == ((("second", 1),), Fraction(1, 1000))
    assert parse_unit("bytes·s")[1:] == ((("byte", 1), ("second", 1)), 1)
    assert parse_unit("FLOP/byte")[1:] == ((("flop", 1), ("byte", -1)), 1)


# ------------------------------------------------------------------ inference, located errors

def test_a_dimensionally_inconsistent_expression_is_a_located_load_error(tmp_path):
    errors = load_errors(tmp_path,
                         claim("sum", "holds", ['{kind: numeric, expr: "P + P*p", at: {P: 1, p: 2}, claimed: "3"}']),
                         claim("exp", "holds", ['{kind: numeric, expr: "exp(M)", at: {M: 1}, claimed: "3"}']),
                         claim("unit", "holds", ['{kind: numeric, expr: "P*p", at: {P: 1, p: 2}, claimed: "2", unit: s}']))
    text = "\n".join(errors)
    assert "t.yaml:" in text
    assert "the terms of a sum have different dimensions: P is in parameters, P*p in bytes" in text
    assert "exp takes a plain number" in text
    assert "the check's unit 's' (seconds) is not the dimension of its expression, which its symbols' units make bytes" in text
    assert all(":" in e.split(": ")[0] for e in errors)            # file:line:column


def test_a_formula_in_another_dimension_than_its_measured_quantity_is_a_load_error(tmp_path):
    # n counts tokens: 4·n²·d is in tokens², while flops.attention counts FLOPs
    header = H.replace("  n: {positive: true, integer: true}\n", "  n: {positive: true, integer: true, unit: tokens}\n")
    errors = load_errors(tmp_path, claim("f", "holds", ['{kind: measure, quantity: flops.attention, '
                                                        'at: {d: 8, h: 2, n: 4}, formula: "4*n^2*d"}']), header=header)
    assert any("the formula is in tokens^2 where flops.attention counts FLOPs" in e for e in errors), errors


@pytest.mark.parametrize("unit, message", [
    ("YB", "unknown unit 'YB'"), ("furlongs", "unknown unit 'furlongs'"), ("bytes^9", "power is 1 to 4"),
    ("a/b/c/d/e/f/g", "at most 6 factors"), ("x" * 100, "at most 64 characters"), ("bytes; import os", "not a unit"),
])
def test_bad_symbol_units_are_located_errors(tmp_path, unit, message):
    header = H.replace("  x: {positive: true}\n", f"  x: {{positive: true, unit: \"{unit}\"}}\n")
    errors = load_errors(tmp_path, claim("c", "holds", ['{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}']),
                         header=header)
    assert any(message in e and "bad unit of symbol 'x'" in e for e in errors), errors


# ------------------------------------------------------------------ YAML numbers, floor and ceil

def test_exponent_numbers_without_a_dot_are_numbers_and_print_like_integers(tmp_path):
    # F: 125e12 is text to YAML 1.1; it is 125·10¹² (an integer): F/2 = 62.5·10¹² exactly
    h = H.replace("  x: {positive: true}\n", "  x: {positive: true}\n  y: {positive: true}\n")
    r = run(tmp_path, claim("e", "holds", ['{kind: numeric, expr: "x/2", at: {x: 125e12}, claimed: "62.5e12"}']),
            claim("f", "holds", ['{kind: numeric, expr: "x*1000", at: {x: 1.5e-3}, claimed: "1.5"}']), header=h)
    assert {k: v.verdict for k, v in r.items()} == {"e": "holds", "f": "holds"}
    assert "x=125,000,000,000,000 = 62,500,000,000,000" in evidence(r["e"])
    assert "x=0.0015" in evidence(r["f"])


def test_floor_ceil_round_min_max_are_exact(tmp_path):
    # ⌈4097/64⌉ = 65 pages; ⌊4097/64⌋ = 64; round(2.5) = 3 (halves up); min(8, 4) + max(8, 4) = 12;
    # ⌈13.5·10⁹ / 3.35·10¹²⌉ s = ⌈0.00403⌉ = 1 s (floor and ceil keep their argument's unit)
    r = run(tmp_path,
            claim("ceil", "holds", ['{kind: numeric, expr: "ceil(n/64)", at: {n: 4097}, claimed: "65"}']),
            claim("floor", "holds", ['{kind: numeric, expr: "floor(n/64)", at: {n: 4097}, claimed: "64"}']),
            claim("round", "holds", ['{kind: numeric, expr: "round(n/2)", at: {n: 5}, claimed: "3"}']),
            claim("minmax", "holds", ['{kind: numeric, expr: "min(d, h) + max(d, h)", at: {d: 8, h: 4}, claimed: "12"}']),
            claim("ceil-units", "holds", ['{kind: numeric, expr: "ceil(M/W)", at: {M: 13.5, W: 3.35}, '
                                          'claimed: "1 s"}']))
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "holds")


# ------------------------------------------------------------------ strict settings

@pytest.mark.parametrize("check, message", [
    ('{kind: measure, quantity: params.model, at: ' + LLAMA + ', dtype: fp16, claimed: "1"}',
     "'dtype' is not a setting of params.model"),
    ('{kind: measure, quantity: flops.forward, at: {d: 64, h: 4, d_ff: 256, L: 2, V: 100, n: 8}, dtype: fp16, '
     'claimed: "1"}', "'dtype' is not a setting of flops.forward"),
    ('{kind: measure, quantity: bytes.kv_cache_token, at: {d: 64, h: 4, L: 2}, activation: swiglu, claimed: "1"}',
     "'activation' is not a setting of bytes.kv_cache_token"),
    ('{kind: measure, quantity: bytes.kv_cache_token, at: {d: 64, h: 4, L: 2}, tied: false, claimed: "1"}',
     "'tied' is not a setting of bytes.kv_cache_token"),
    ('{kind: measure, quantity: attention.bytes.fp32, at: {d: 64, h: 4, n: 8}, dtype: fp16, claimed: "1"}',
     "names its dtype in the quantity (fp32)"),
    ('{kind: measure, quantity: flops.ffn, at: {d: 64, h: 4, d_ff: 256, L: 2, V: 100, n: 8}, norm: rmsnorm, '
     'claimed: "1"}', "'norm' is not a setting of flops.ffn"),
    ('{kind: compare, left: flops.ffn, right: flops.attention, at: {d: 64, h: 4, d_ff: 256, L: 2, V: 100, n: 8}, '
     'tied: false, claimed: greater}', "'tied' is not a setting of flops.ffn and flops.attention"),
])
def test_a_setting_the_quantity_does_not_take_is_a_located_error(tmp_path, check, message):
    errors = load_errors(tmp_path, claim("s", "holds", [check]))
    assert any(message in e and "t.yaml:" in e for e in errors), errors


def test_the_evidence_names_the_dtype_and_the_settings(tmp_path):
    # KV cache per token, d=4096, L=32, h=g=32: 2 (K and V) · 32 layers · 4096 numbers · 4 bytes = 1,048,576
    r = run(tmp_path,
            claim("kv", "holds", ['{kind: measure, quantity: bytes.kv_cache_token, at: {d: 4096, h: 32, L: 32}, '
                                  'claimed: "1 MiB"}']),
            claim("kv16", "holds", ['{kind: measure, quantity: bytes.kv_cache_token, at: {d: 4096, h: 32, L: 32}, '
                                    'dtype: fp16, claimed: "512 KiB"}']),
            claim("llama", "holds", [f'{{kind: measure, quantity: params.model, at: {LLAMA}, {LLAMA_SETTINGS}, '
                                     'claimed: "6,738,415,616"}']))
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "holds")
    assert "= 1,048,576 at d=4,096, h=32, L=32 (fp32)" in evidence(r["kv"])
    assert "(fp16)" in evidence(r["kv16"])
    assert "(swiglu, rmsnorm, no biases, untied)" in evidence(r["llama"])


# ------------------------------------------------------------------ per-check expectations

def test_a_check_may_state_what_it_must_give(tmp_path):
    # 4·512² = 1,048,576: the arithmetic check must hold; 8·2048·4096² = 274,877,906,944 ≠ 34.4B: refuted
    arith = '{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,048,576", expect: holds}'
    broken = '{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,000,000", expect: holds}'   # a broken check
    refute = '{kind: numeric, expr: "8*n*d^2", at: {n: 2048, d: 4096}, claimed: "≈ 34.4B"}'
    r = run(tmp_path, claim("fine", "refuted", [arith, refute]), claim("hidden", "refuted", [broken, refute]))
    assert {k: (v.verdict, v.ok) for k, v in r.items()} == {"fine": ("refuted", True), "hidden": ("refuted", False)}
    assert "(expected holds)" in r["fine"].checks[0].summary
    assert "(expected holds ✗)" in r["hidden"].checks[0].summary
    assert [c.kind for c in r["hidden"].checks_not_as_expected] == ["numeric"]


def test_a_checks_expect_must_be_a_verdict(tmp_path):
    errors = load_errors(tmp_path, claim("c", "holds", ['{kind: numeric, expr: "d", at: {d: 1}, claimed: "1", '
                                                        'expect: maybe}']))
    assert any("a check's expect must be one of holds, refuted" in e and "t.yaml:" in e for e in errors), errors


def test_an_intensity_is_in_flops_per_byte(tmp_path):
    # intensity.* (mha.inference) is FLOP per byte moved: a figure in bytes is refuted whatever its number
    at = "{d: 64, h: 4, d_ff: 256, n: 8}"
    r = run(tmp_path, claim("i", "refuted", [f'{{kind: measure, quantity: intensity.decode_step_layer, at: {at}, '
                                             'dtype: fp16, claimed: "1 bytes"}']))
    assert r["i"].verdict == "refuted"
    assert "the text states bytes where intensity.decode_step_layer is in FLOPs per byte" in evidence(r["i"])


def test_an_intensity_is_shown_to_six_significant_digits(tmp_path):
    # the MQA block of tests/test_mha_inference.py (d = 8, h = 2, g = 1, d_ff = 16) decoding at n = 5, fp32:
    # 1,056 matmul FLOPs over 2,368 bytes = 0.4459459459… FLOP/byte, shown 0.445946 (not 0.44594594594594594);
    # at g = 2 (MHA): 1,184 FLOPs over 2,400 + 320 + 64 + 64 = 2,848 bytes = 0.41573033… → 0.41573, and the
    # ratio of the two 0.4459459…/0.4157303… = 1.07268… (not an exact fraction of two floats' bits)
    at = "{d: 8, h: 2, g: 1, d_ff: 16, n: 5}"
    r = run(tmp_path, claim("i", "holds", [f'{{kind: measure, quantity: intensity.decode_step_layer, at: {at}, '
                                           'claimed: "≈ 0.446"}',
                                           '{kind: compare, left: intensity.decode_step_layer, '
                                           'right: intensity.decode_step_layer, at: {d: 8, h: 2, d_ff: 16, n: 5}, '
                                           'left_at: {g: 1}, right_at: {g: 2}, claimed: greater, ratio: "≈ 1.07"}']))
    text = evidence(r["i"])
    assert r["i"].verdict == "holds", text
    assert "measured intensity.decode_step_layer = 0.445946 at d=8, h=2, g=1, d_ff=16, n=5" in text, text
    assert "0.4459459459" not in text
    assert "intensity.decode_step_layer 0.445946 at" in text and "intensity.decode_step_layer 0.41573 at" in text
    assert "ratio left/right = 1.07268;" in text, text
    # the text's arithmetic (x = 0.5) gives its figure "≈ 0.5" (0.45 to 0.55) and the measured 0.445946 does not:
    # the claim's disagreement names the measured number as the evidence does
    r = run(tmp_path, claim("d", "refuted", ['{kind: numeric, expr: x, at: {x: 0.5}, claimed: "≈ 0.5"}',
                                             f'{{kind: measure, quantity: intensity.decode_step_layer, at: {at}, '
                                             'claimed: "≈ 0.5"}']))
    assert "while intensity.decode_step_layer measures 0.445946 —" in r["d"].disagreement, r["d"].disagreement


# ------------------------------------------------------------------ dimension only where known

def test_a_figure_with_a_unit_on_an_expression_without_units_is_compared_by_value_and_says_so(tmp_path):
    # 4·512² = 1,048,576 = 1 MiB (2²⁰ bytes): d declares no unit, so 4*d^2 has no known dimension and the
    # figure holds by value; the evidence says its dimension was not checked. "1,048,576" states no unit:
    # nothing to say; P*p (parameters × bytes/parameter) is in bytes: checked, nothing to say either
    note = "dimension not checked: no unit declared on the expression's symbols"
    r = run(tmp_path,
            claim("by-value", "holds", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1 MiB"}']),
            claim("no-unit", "holds", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,048,576"}']),
            claim("checked", "holds", ['{kind: numeric, expr: "P*p", at: {P: 524288, p: 2}, claimed: "1 MiB"}']),
            claim("config", "holds", ['{kind: config, model: toy, expr: "d^2", claimed: "1 MiB"}']))   # 1,024²
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "holds")
    assert evidence(r["by-value"]).endswith(f"= 1,048,576 bytes; claimed 1 MiB (= 1,048,576, exact); {note}"), evidence(r["by-value"])
    assert r["by-value"].checks[0].details["dimension"] == note
    assert note in evidence(r["config"]) and evidence(r["config"]).endswith("[made up for the test]")
    assert note not in evidence(r["no-unit"]) and note not in evidence(r["checked"])


def test_strict_units_refuse_a_figure_whose_dimension_cannot_be_checked(tmp_path):
    strict = H.replace("  title: Test subject\n", "  title: Test subject\n  units: strict\n")
    assert strict != H
    bad = '{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1 MiB"}'
    errors = load_errors(tmp_path, claim("c", "holds", [bad]), header=strict)
    assert any("t.yaml:" in e and "the figure '1 MiB' states bytes, but the dimension of the expression is not known: "
               "none of its symbols (d) declares a unit" in e for e in errors), errors
    # with the dimension known (a check's unit:, symbols with units) or no unit stated, the strict spec loads
    fine = ['{kind: numeric, expr: "4*d^2", at: {d: 512}, unit: bytes, claimed: "1 MiB"}',
            '{kind: numeric, expr: "P*p", at: {P: 524288, p: 2}, claimed: "1 MiB"}',
            '{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,048,576"}']
    r = run(tmp_path, claim("c", "holds", fine), header=strict)
    assert r["c"].verdict == "holds" and "dimension not checked" not in evidence(r["c"])
    errors = load_errors(tmp_path, claim("c", "holds", fine),
                         header=H.replace("  title: Test subject\n", "  title: Test subject\n  units: tight\n"))
    assert any("units must be one of lenient, strict, got 'tight'" in e for e in errors), errors


# ------------------------------------------------------------------ hardware cards

CARD = """hardware:
  h100-sxm:
    name: NVIDIA H100 SXM
    citation: "NVIDIA H100 datasheet, SXM, dense"
    peak: {fp16: 989 TFLOP/s, fp32: 67 TFLOP/s}
    bandwidth: 3.35 TB/s
    memory: 80 GB
    memory_kind: HBM3
"""


def test_hardware_cards_and_roofline_quantities(tmp_path):
    hw = "{kind: hardware, card: h100-sxm, "
    r = run(tmp_path,
            # 989·10¹² / 3.35·10¹² = 295.22… FLOP/byte
            claim("ridge", "holds", [hw + 'quantity: ridge, dtype: fp16, claimed: "≈ 295 FLOP/byte"}']),
            # 13.5·10⁹ bytes / 3.35·10¹² bytes/s = 4.0299 ms; 14·10⁹ FLOPs / 989·10¹² FLOP/s = 14.156 µs
            claim("times", "holds", [hw + 'quantity: time_memory, bytes: "13.5 GB", claimed: "≈ 4.03 ms"}',
                                     hw + 'quantity: time_compute, dtype: fp16, flops: "14 GFLOPs", claimed: "≈ 14.2 µs"}']),
            claim("gib", "refuted", [hw + 'quantity: memory, claimed: "80 GiB"}']),            # 80·10⁹ ≠ 80·2³⁰
            claim("unit", "refuted", [hw + 'quantity: bandwidth, claimed: "3.35 TB"}']),        # bytes, not bytes/s
            header=H + CARD)
    assert {k: v.verdict for k, v in r.items()} == {"ridge": "holds", "times": "holds", "gib": "refuted",
                                                   "unit": "refuted"}
    assert "989 TFLOP/s / 3.35 TB/s" in evidence(r["ridge"])
    assert "13.5 GB / 3.35 TB/s" in evidence(r["times"])
    assert "the text states bytes where bandwidth is in bytes per second" in evidence(r["unit"])
    assert "[NVIDIA H100 datasheet, SXM, dense]" in evidence(r["gib"])


@pytest.mark.parametrize("card, check, message", [
    (CARD.replace("bandwidth: 3.35 TB/s", "bandwidth: 3.35 TB"), '{kind: hardware, card: h100-sxm, quantity: memory, '
     'claimed: "80 GB"}', "bandwidth must be in bytes per second"),
    (CARD.replace("fp32: 67 TFLOP/s", "fp33: 67 TFLOP/s"), '{kind: hardware, card: h100-sxm, quantity: memory, '
     'claimed: "80 GB"}', "unknown dtype 'fp33' in peak"),
    (CARD, '{kind: hardware, card: h100-sxm, quantity: ridge, dtype: bf16, claimed: "1"}', "records no peak for bf16"),
    (CARD, '{kind: hardware, card: h100-sxm, quantity: ridge, claimed: "1"}', "needs 'dtype'"),
    (CARD, '{kind: hardware, card: h100-sxm, quantity: memory, dtype: fp16, claimed: "1"}', "does not take 'dtype'"),
    (CARD, '{kind: hardware, card: h100-sxm, quantity: time_memory, bytes: "5 ms", claimed: "1"}',
     "bytes must be in bytes"),
    (CARD, '{kind: hardware, card: a100, quantity: memory, claimed: "1"}', "unknown hardware 'a100'"),
])
def test_hardware_mistakes_are_located_errors(tmp_path, card, check, message):
    errors = load_errors(tmp_path, claim("c", "holds", [check]), header=H + card)
    assert any(message in e and "t.yaml:" in e for e in errors), errors
