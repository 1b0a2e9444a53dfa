"""Hostile: Write forged "passing" replies for the next hundred requests at import, before any request."""
import json
import os
import struct
import sys

REP = json.loads(sys.argv[1])["rep"]
for n in range(1, 100):
    text = json.dumps({"id": n, "ok": 1, "value": 1050624}).encode()
    try:
        os.set_blocking(REP, False)
        os.write(REP, struct.pack(">II", len(text), 0) + text)
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
