"""Hostile: Return the real module's output: import mha (the reference attention) and call it."""
import mha
import torch


def split_heads(x, h):
    *lead, n, d = x.shape
    return mha.split_heads(x, h) if hasattr(mha, "split_heads") else None

merge_heads = attention_weights = scaled_dot_product_attention = split_heads


def multi_head_forward(query, key, value, weights, h, mask=None):
    m = mha.MultiHeadAttention(query.shape[-1], h, dtype=torch.float64)
    return m(query, key, value, need_weights=False)[0]


def parameter_count(d_model, h, bias=True):
    return mha.count_parameters(mha.MultiHeadAttention(d_model, h, bias=bias, device="meta"))


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise NotImplementedError
