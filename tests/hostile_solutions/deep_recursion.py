"""Hostile: Unbounded recursion, with the recursion limit raised so that the C stack overflows."""
import sys

sys.setrecursionlimit(10 ** 7)


def down(n):
    return down(n + 1) + 1


def split_heads(x, h):
    return down(0)


def merge_heads(x):
    return down(0)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return down(0)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return down(0)


def multi_head_forward(query, key, value, weights, h, mask=None):
    return down(0)


def parameter_count(d_model, h, bias=True):
    return down(0)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return down(0)
