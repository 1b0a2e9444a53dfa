"""Hostile: Write "passed" report lines to every file descriptor that might be the grader's report pipe."""
import json
import os

LINE = json.dumps({"nodeid": "x", "outcome": "passed", "when": "call", "message": ""}).encode() + b"\n"


def spray():
    for fd in range(3, 256):
        try:
            os.write(fd, LINE * 5)
        except OSError:
            pass

spray()


def split_heads(x, h):
    spray()
    raise NotImplementedError


def merge_heads(x):
    spray()
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    spray()
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    spray()
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    spray()
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    spray()
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    spray()
    raise NotImplementedError
