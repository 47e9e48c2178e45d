"""Fuzzes what a listening process reads from its socket (python/paddle_prof/
listen_protocol.py): the lines of a connection, each a request, and what ps, trigger and
top read back as replies.

    fuzz_listen_requests.py WORK SECONDS [REGRESSION...]

An input is the bytes a peer sends. Read through LineReader from a real socket, each
line is a request whose fields have the promised types and bounds, or a RequestError
(the error reply); read as a reply, a JSON object or a ValueError. Nothing else is
raised. The seeds are the requests ps, trigger and top send; the fuzzing is
python_fuzzing.py's.
"""

import json
import os
import socket
import sys
import threading

from python_fuzzing import atheris, fuzz

if atheris is not None:  # coverage of the protocol alone
    with atheris.instrument_imports(include=["paddle_prof.listen_protocol"]):
        from paddle_prof import listen_protocol as protocol
else:
    from paddle_prof import listen_protocol as protocol

SEEDS = [protocol.encode(r) for r in (
    {"request": "status"},
    {"request": "trigger", "steps": 5, "out": "/tmp/out", "record_shapes": True,
     "modules": False, "native": False, "job": True, "wait": 300},
    {"request": "trigger", "steps": 1, "out": "/x", "wait": 0.5},
    {"request": "top"},
    {"request": "view"},
)] + [protocol.encode({"request": "status"}) + protocol.encode({"request": "view"}) * 3]

CHECKED = {"steps": int, "out": str, "record_shapes": bool, "modules": bool, "native": bool,
           "job": bool}


def check_request(request):
    assert request["request"] in protocol.REQUESTS, request
    if request["request"] != "trigger":
        assert list(request) == ["request"], request
        return
    for name, kind in CHECKED.items():
        assert type(request[name]) is kind, (name, request)
    assert 1 <= request["steps"] <= protocol.MAX_STEPS, request
    assert os.path.isabs(request["out"]) and "\0" not in request["out"], request
    wait = request["wait"]
    assert type(wait) in (int, float) and 0 < wait <= 86400, request
    json.dumps(request, allow_nan=False)  # a job's request is passed on as it was read


def harness(data):
    ours, peer = socket.socketpair()
    with ours, peer:
        # A writer of its own: the socket's buffer is smaller than the largest inputs.
        def send():
            try:
                peer.sendall(data)
            except OSError:  # the reader stopped at a line too long
                pass
            peer.shutdown(socket.SHUT_WR)

        writer = threading.Thread(target=send)
        writer.start()
        reader = protocol.LineReader(ours)
        try:
            while True:
                line = reader.line()
                if line is None:
                    break
                try:
                    check_request(protocol.parse_request(line))
                except protocol.RequestError as e:
                    assert str(e), "an error reply says what is wrong"
                try:
                    assert isinstance(protocol.reply(line), dict)
                except ValueError:
                    pass
        except protocol.RequestError:  # a line past the limit ends the connection
            pass
        finally:
            ours.shutdown(socket.SHUT_RD)
            writer.join()


def main(argv):
    work, seconds, regressions = argv[1], int(argv[2]), argv[3:]
    return fuzz("fuzz_listen_requests", harness, SEEDS, work, seconds, regressions)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
