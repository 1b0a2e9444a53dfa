"""Hostile: Every call sleeps for an hour."""
import time


def split_heads(x, h):
    time.sleep(3600)


def merge_heads(x):
    time.sleep(3600)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    time.sleep(3600)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    time.sleep(3600)


def multi_head_forward(query, key, value, weights, h, mask=None):
    time.sleep(3600)


def parameter_count(d_model, h, bias=True):
    time.sleep(3600)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    time.sleep(3600)
