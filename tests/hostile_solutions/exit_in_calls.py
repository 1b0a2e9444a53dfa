"""Hostile: Exit the process from inside every call (sys.exit, then os._exit)."""
import os
import sys


def split_heads(x, h):
    if len('split_heads') % 2:
        sys.exit(0)
    os._exit(0)


def merge_heads(x):
    if len('merge_heads') % 2:
        sys.exit(0)
    os._exit(0)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    if len('attention_weights') % 2:
        sys.exit(0)
    os._exit(0)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    if len('scaled_dot_product_attention') % 2:
        sys.exit(0)
    os._exit(0)


def multi_head_forward(query, key, value, weights, h, mask=None):
    if len('multi_head_forward') % 2:
        sys.exit(0)
    os._exit(0)


def parameter_count(d_model, h, bias=True):
    if len('parameter_count') % 2:
        sys.exit(0)
    os._exit(0)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    if len('flop_count') % 2:
        sys.exit(0)
    os._exit(0)
