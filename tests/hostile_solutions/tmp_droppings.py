"""Hostile: Leave files in /tmp, /var/tmp, /dev/shm, the home folder and anywhere writable."""
import os

for folder in ("/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), "/run", "/var/lock", "/grade", "/"):
    try:
        with open(os.path.join(folder, "grader-hostile-dropping"), "w") as f:
            f.write("left behind")
    except OSError:
        pass


def split_heads(x, h):
    open('/tmp/grader-hostile-split_heads', 'w').write('x')
    raise NotImplementedError


def merge_heads(x):
    open('/tmp/grader-hostile-merge_heads', 'w').write('x')
    raise NotImplementedError


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    open('/tmp/grader-hostile-attention_weights', 'w').write('x')
    raise NotImplementedError


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    open('/tmp/grader-hostile-scaled_dot_product_attention', 'w').write('x')
    raise NotImplementedError


def multi_head_forward(query, key, value, weights, h, mask=None):
    open('/tmp/grader-hostile-multi_head_forward', 'w').write('x')
    raise NotImplementedError


def parameter_count(d_model, h, bias=True):
    open('/tmp/grader-hostile-parameter_count', 'w').write('x')
    raise NotImplementedError


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    open('/tmp/grader-hostile-flop_count', 'w').write('x')
    raise NotImplementedError
