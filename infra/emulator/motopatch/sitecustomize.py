# Loaded by Python at start-up because infra/emulator puts this file's
# directory first on PYTHONPATH of the moto_server processes it starts (and of
# nothing else).
#
# Why: moto's DynamoDB PutItem evaluates the ConditionExpression and then
# stores the item without holding a lock, and moto_server serves requests on
# threads, so two racing `version = :expected` writes can both pass and one
# update is silently lost (the storetest race test caught it about once in
# 15 runs). Real DynamoDB applies a conditional write atomically per item. To
# emulate that, every request is handled under one lock. Requests are short,
# so the cost is small.
import sys
import threading

try:
    import werkzeug.serving as _serving
except ImportError:  # not the interpreter that runs moto_server
    _serving = None

if _serving is not None:
    _run_simple = _serving.run_simple
    _lock = threading.Lock()

    def _serialized(app):
        def handle(environ, start_response):
            with _lock:
                # Produce the whole body inside the lock: the state change
                # and the answer belong to one request.
                return list(app(environ, start_response))

        return handle

    def run_simple(hostname, port, application, *args, **kwargs):
        sys.stderr.write("chessapi-emulator: moto requests serialized\n")
        sys.stderr.flush()
        return _run_simple(hostname, port, _serialized(application), *args, **kwargs)

    _serving.run_simple = run_simple
