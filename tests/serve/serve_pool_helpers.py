"""Tasks for the worker-pool tests (imported by the workers, which the fork server starts)."""
import os
import time

STATE = {}


def init(fail=False):
    if fail:
        raise ValueError("the bank is broken")
    STATE["pid"] = os.getpid()


def handler(payload):
    kind, arg = payload
    if kind == "echo":
        return (arg, STATE["pid"])
    if kind == "hang":          # as a check stuck in C code: no alarm of the engine reaches it
        time.sleep(arg)
        return "woke"
    if kind == "die":
        os._exit(3)
    if kind == "hog":
        return len(bytearray(arg))
    raise ValueError(f"no such task {kind}")
