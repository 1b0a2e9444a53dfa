"""Hostile: Patch the checks: make mha_checks.compare and close accept anything, then return junk."""
import sys
import types

try:
    import mha_checks
except ImportError:  # not on the path: plant one, hoping the tests import ours
    mha_checks = types.ModuleType("mha_checks")
    sys.modules["mha_checks"] = mha_checks
mha_checks.compare = lambda *a, **k: None
mha_checks.close = lambda *a, **k: True
mha_checks.TOL = float("inf")


def split_heads(x, h):
    return 0


def merge_heads(x):
    return 0


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return 0


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return 0


def multi_head_forward(query, key, value, weights, h, mask=None):
    return 0


def parameter_count(d_model, h, bias=True):
    return 0


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return 0
