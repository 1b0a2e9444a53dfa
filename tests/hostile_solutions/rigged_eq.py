"""Hostile: Return an object that equals everything, is true, and has any shape asked for."""
class Anything:
    shape = property(lambda self: self)
    dtype = property(lambda self: self)

    def __eq__(self, other):
        return True

    __ne__ = lambda self, other: False
    __bool__ = lambda self: True
    __getattr__ = lambda self, name: (lambda *a, **k: self)
    __len__ = lambda self: 4
    __iter__ = lambda self: iter(())
    __float__ = lambda self: 0.0
    __int__ = lambda self: 0
    __index__ = lambda self: 0
    __hash__ = lambda self: 0


def split_heads(x, h):
    return Anything()


def merge_heads(x):
    return Anything()


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return Anything()


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return Anything()


def multi_head_forward(query, key, value, weights, h, mask=None):
    return Anything()


def parameter_count(d_model, h, bias=True):
    return Anything()


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return Anything()
