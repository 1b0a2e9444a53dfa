"""Hostile: Import the grader (its bundled exercises hold the reference) and return the reference's answers."""
from grader.files.bundled import bundled  # the grader's own package
import importlib.util

_spec = importlib.util.spec_from_file_location("ref", bundled("exercises") + "/17-08/code/solution.py")
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
split_heads, merge_heads, attention_weights = ref.split_heads, ref.merge_heads, ref.attention_weights
scaled_dot_product_attention, multi_head_forward = ref.scaled_dot_product_attention, ref.multi_head_forward
parameter_count, flop_count = ref.parameter_count, ref.flop_count
