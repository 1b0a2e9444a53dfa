"""Hostile: Return the inputs themselves (or their shapes' worth of zeros): no computation at all."""
import torch


def split_heads(x, h):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def merge_heads(x):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def multi_head_forward(query, key, value, weights, h, mask=None):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def parameter_count(d_model, h, bias=True):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    args = [v for v in locals().values() if isinstance(v, torch.Tensor)]
    return args[0] if args else 0
