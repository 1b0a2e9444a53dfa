"""Hostile: Kill its own process group and session from inside every call."""
import os
import signal


def split_heads(x, h):
    os.killpg(0, signal.SIGKILL)


def merge_heads(x):
    os.killpg(0, signal.SIGKILL)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    os.killpg(0, signal.SIGKILL)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    os.killpg(0, signal.SIGKILL)


def multi_head_forward(query, key, value, weights, h, mask=None):
    os.killpg(0, signal.SIGKILL)


def parameter_count(d_model, h, bias=True):
    os.killpg(0, signal.SIGKILL)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    os.killpg(0, signal.SIGKILL)
