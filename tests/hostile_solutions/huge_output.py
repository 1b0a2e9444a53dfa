"""Hostile: Flood stdout and stderr (40 MB) in every call."""
import sys


def split_heads(x, h):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def merge_heads(x):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    for _ in range(20):
        sys.stdout.write('x' * 1_000_000)
        sys.stderr.write('y' * 1_000_000)
    raise NotImplementedError
