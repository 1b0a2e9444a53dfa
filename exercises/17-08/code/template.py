"""17-08 Multi-Head Attention — your implementation.

Write each function below, then check it against the real multi-head attention:

    pytest exercises/17-08/code --solution path/to/this_file.py

Conventions (as in 17-08):
- every tensor may have leading batch dimensions (…); the last two are what the text writes,
  e.g. Q is (…, n_q, d_model) and Q_i is (…, n_q, d_k);
- weights are in the text's orientation: Q_all = query · W^Q (+ b_Q), W^Q is (d_model, d_model),
  W^O is (h·d_v, d_model);
- d_k = d_v = d_model / h;
- a mask is a bool tensor broadcastable to (…, n_q, n_k): True means "may not attend".

Use torch (and math); do not import mha.
"""
import math

import torch
import torch.nn.functional as F


def split_heads(x, h):
    """(…, n, d_model) -> (…, h, n, d_k): §7's view(n, h, d_k) then transpose."""
    raise NotImplementedError


def merge_heads(x):
    """(…, h, n, d_v) -> (…, n, h·d_v): Concat(head_1, …, head_h)."""
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    """A = softmax(Q·Kᵀ / √d_k) over the keys: (…, n_q, n_k).

    mask: positions that may not attend (True) get weight 0. In training (training=True),
    dropout(A, dropout_p) as in §8: each weight zeroed with probability p, the rest scaled by 1/(1−p).
    """
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    """head = A·V with A from attention_weights: (…, n_q, d_v)."""
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h)·W^O (+ b_O): (…, n_q, d_model).

    weights: {"W_Q", "W_K", "W_V", "W_O"} and, where present, {"b_Q", "b_K", "b_V", "b_O"}.
    """
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    """Number of parameters of a multi-head attention layer (W^Q, W^K, W^V, W^O and, with bias,
    their four bias vectors)."""
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    """Matmul FLOPs of one forward pass (the four projections, Q·Kᵀ and A·V; 1 multiply-add =
    2 FLOPs; softmax, scaling and biases not counted). n_k: key/value length (default n_q)."""
    raise NotImplementedError
