"""Hostile: Return a gigantic tensor (32 MiB, twice what a reply may hold) from every call."""
import torch


def split_heads(x, h):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def merge_heads(x):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def multi_head_forward(query, key, value, weights, h, mask=None):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def parameter_count(d_model, h, bias=True):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return torch.zeros(4 * 1024 * 1024, dtype=torch.float64)
