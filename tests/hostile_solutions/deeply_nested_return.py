"""Hostile: Return lists nested 100000 deep, and a dict that contains itself."""
def nested():
    x = []
    for _ in range(100000):
        x = [x]
    return x


def cyclic():
    d = {}
    d["d"] = d
    return d


def split_heads(x, h):
    return nested() if len('split_heads') % 2 else cyclic()


def merge_heads(x):
    return nested() if len('merge_heads') % 2 else cyclic()


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return nested() if len('attention_weights') % 2 else cyclic()


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return nested() if len('scaled_dot_product_attention') % 2 else cyclic()


def multi_head_forward(query, key, value, weights, h, mask=None):
    return nested() if len('multi_head_forward') % 2 else cyclic()


def parameter_count(d_model, h, bias=True):
    return nested() if len('parameter_count') % 2 else cyclic()


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return nested() if len('flop_count') % 2 else cyclic()
