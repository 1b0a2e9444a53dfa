"""Hostile: Write a well-framed reply that says "ok" with a malformed value, then garbage, in every call."""
import json
import os
import struct
import sys

REP = json.loads(sys.argv[1])["rep"]


def forge(n):
    text = json.dumps({"id": n, "ok": 1, "value": {"T": ["float64", [2, 4, 6, 4], 0, 99999]}}).encode()
    os.write(REP, struct.pack(">II", len(text), 0) + text + b"\x00garbage")

COUNT = [0]


def split_heads(x, h):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def merge_heads(x):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def multi_head_forward(query, key, value, weights, h, mask=None):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def parameter_count(d_model, h, bias=True):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    COUNT[0] += 1
    forge(COUNT[0])
    return 0
