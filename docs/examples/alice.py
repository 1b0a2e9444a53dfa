"""A learner's code answer (an example for the docs): the reference with one mistake, W^O forgotten."""
import math

import torch
import torch.nn.functional as F


def split_heads(x, h):
    """(…, n, d_model) -> (…, h, n, d_k)."""
    *lead, n, d = x.shape
    return x.reshape(*lead, n, h, d // h).transpose(-3, -2)


def merge_heads(x):
    """(…, h, n, d_v) -> (…, n, h·d_v)."""
    *lead, h, n, d_v = x.shape
    return x.transpose(-3, -2).reshape(*lead, n, h * d_v)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    """A = softmax(Q·Kᵀ / √d_k), masked, with dropout in training: (…, n_q, n_k)."""
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    A = torch.softmax(scores, dim=-1)
    if training and dropout_p > 0:
        A = F.dropout(A, p=dropout_p, training=True)
    return A


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    """head = A·V: (…, n_q, d_v)."""
    return attention_weights(Q, K, mask, dropout_p, training) @ V


def multi_head_forward(query, key, value, weights, h, mask=None):
    """Concat(head_1, …, head_h)·W^O (+ b_O): (…, n_q, d_model)."""
    def project(x, name):
        b = weights.get("b_" + name)
        y = x @ weights["W_" + name]
        return y if b is None else y + b

    Q = split_heads(project(query, "Q"), h)
    K = split_heads(project(key, "K"), h)
    V = split_heads(project(value, "V"), h)
    return merge_heads(scaled_dot_product_attention(Q, K, V, mask))  # mistake: no W^O


def parameter_count(d_model, h, bias=True):
    """4·d² weights (W^Q, W^K, W^V, W^O, whatever h) plus 4·d biases."""
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    """Projections 2·d²·(n_q + n_k + n_k + n_q), attention 2·n_q·n_k·d twice (Q·Kᵀ and A·V)."""
    n_k = n_q if n_k is None else n_k
    d = d_model
    projections = 2 * d * d * (2 * n_q + 2 * n_k)
    attention = 2 * (2 * n_q * n_k * d)
    return batch * (projections + attention)
