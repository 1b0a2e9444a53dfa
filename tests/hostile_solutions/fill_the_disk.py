"""Hostile: Fill /tmp and /dev/shm with as many 1 MiB files as fit."""
import os

for folder in ("/tmp", "/dev/shm", "/var/tmp"):
    for i in range(2000):
        try:
            with open(f"{folder}/grader-hostile-fill-{i}", "wb") as f:
                f.write(b"x" * (1 << 20))
        except OSError:
            break


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
