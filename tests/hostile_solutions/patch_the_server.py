"""Hostile: Patch the server in its own process: every reply claims a zero tensor of the expected shape."""
import sys

server = sys.modules.get("__main__")
wire = sys.modules.get("wire")
if wire is not None:
    real_frame = wire.frame

    def frame(header, values, limits=None):
        import torch
        if "value" in values:
            values = {"value": torch.zeros(2, 4, 6, 4, dtype=torch.float64)}
        return real_frame(header, values, limits) if limits else real_frame(header, values)

    wire.frame = frame


def split_heads(x, h):
    return None


def merge_heads(x):
    return None


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return None


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return None


def multi_head_forward(query, key, value, weights, h, mask=None):
    return None


def parameter_count(d_model, h, bias=True):
    return None


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return None
