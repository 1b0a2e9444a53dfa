"""The learner's side of the channel: runs in the sandbox, imports the learner's file, serves calls.

    python -B -S solution_server.py '{"req": 3, "rep": 4, "solution": "/grade/solution.py", ...}'

Copied into the sandbox's read-only ``/grade`` beside ``wire.py`` (and nothing else of the
grader): it reads one request at a time from ``req``, calls the learner's function, and writes
one reply to ``rep``. First it sends a hello: the module's functions, or why it could not be
imported (with the learner's line).

Nothing here is trusted by the grader: the learner's code runs in this very process and may
replace any of it, write anything to ``rep`` or exit at any time. The grader's side
(:mod:`grader.code.solution_proxy`) reads each reply as hostile bytes.
"""
import importlib.util
import json
import os
import sys
import traceback

TYPE_CHECKING = False       # no typing at run time (the sandbox's start); annotations of names below are strings
if TYPE_CHECKING:
    from types import ModuleType

MAX_NAMES = 1000


def _where(exc: BaseException, path: str) -> dict[str, int | str]:
    """The learner's line of a traceback: the last frame in their file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    if isinstance(exc, SyntaxError) and exc.filename == path:
        return {"line": exc.lineno or 0, "source": (exc.text or "").strip()[:300]}
    if not frames:
        return {"line": 0, "source": ""}
    return {"line": frames[-1].lineno or 0, "source": (frames[-1].line or "").strip()[:300]}


def _raised(exc: BaseException, path: str) -> dict[str, object]:
    try:
        text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    except BaseException:
        text = "(its message cannot be shown)"
    return {"type": type(exc).__name__[:100], "message": str(text)[:2000], **_where(exc, path)}


def _load(path: str) -> "ModuleType":
    spec = importlib.util.spec_from_file_location("solution", path)
    # a .py file always has a spec with a loader (were it None, this fails here, as it always did)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["solution"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _names(module: "ModuleType") -> tuple[list[str], list[str]]:
    functions: list[str] = []
    values: list[str] = []
    for name, value in list(vars(module).items())[: 10 * MAX_NAMES]:
        if not isinstance(name, str) or name.startswith("_") or type(value).__name__ == "module":
            continue
        (functions if callable(value) else values).append(name[:100])
    return functions[:MAX_NAMES], values[:MAX_NAMES]


def main() -> None:
    config = json.loads(sys.argv[1])
    req, rep, path = config["req"], config["rep"], config["solution"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if TYPE_CHECKING:
        from grader.code import wire
    else:
        import wire     # grader/code/wire.py, copied beside this file
    sys.path.pop(0)
    limits = wire.WireLimits(blob_bytes=config["blob_bytes"])
    requests = wire.WireLimits(header_bytes=1 << 26, blob_bytes=1 << 30)
    os.set_inheritable(req, False)
    os.set_inheritable(rep, False)

    def send(header: "dict[str, object]", values: "dict[str, object]" = {}) -> None:
        try:
            data = wire.frame(header, values, limits)
        except (wire.WireError, RecursionError, MemoryError) as e:
            data = wire.pack({"id": header.get("id", 0), "unsendable": str(e)[:300]})
        wire.write_all(rep, data)

    import warnings
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch without numpy: noise
    for name in config.get("preload", ()):  # what the tests' arguments need (torch): before the
        try:                                  # learner's code, so that no call pays for the import
            __import__(name)
        except ImportError:
            pass
    try:
        module = _load(path)
    except BaseException as e:  # a syntax error, an exception at import, even SystemExit
        send({"hello": 1, "import_error": {**_raised(e, path), "syntax": isinstance(e, SyntaxError)}})
        return
    functions, values = _names(module)
    send({"hello": 1, "functions": functions, "values": values})
    torch = sys.modules.get("torch")
    while True:
        try:
            header, blob = wire.read_frame(req, None, requests)
        except wire.WireClosed:
            return
        n = header.get("id", 0)
        try:
            if "get" in header:
                send({"id": n, "ok": 1}, {"value": getattr(module, header["get"])})
                continue
            args = wire.decode(header["args"], blob)
            kwargs = wire.decode(header["kwargs"], blob)
            fn = getattr(module, header["call"])
            torch = torch or sys.modules.get("torch")
            if torch is not None:
                torch.manual_seed(header.get("seed", 0))
                with torch.no_grad():
                    value = fn(*args, **kwargs)
            else:
                value = fn(*args, **kwargs)
        except BaseException as e:  # the learner's exception, reported as theirs
            send({"id": n, "raised": _raised(e, path)})
            continue
        send({"id": n, "ok": 1}, {"value": value})


if __name__ == "__main__":
    main()
