"""Calls to the hub's REST API with the ``course-admin`` service's token (stdlib only)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from course.classroom.errors import ClassError


def call(base: str, token: str, method: str, path: str, body: Any = None,
         timeout: float = 20.0) -> tuple[int, Any]:
    """(status, parsed JSON or None) of ``METHOD base/hub/api/path``."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(f"{base.rstrip('/')}/hub/api/{path.lstrip('/')}", data=data,
                                 method=method, headers={"Authorization": f"token {token}",
                                                         "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw) if raw else None
        except ValueError:
            return exc.code, raw.decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as exc:
        raise ClassError(f"the hub at {base} does not answer ({exc})") from None
