"""Hostile: Close or redirect the reply pipe (and every other descriptor) at import."""
import os

devnull = os.open("/dev/null", os.O_RDWR)
for fd in range(3, 64):
    if fd != devnull:
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass


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
