"""Load test of a class: N simulated learners take a quiz at once through the hub's proxy.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_class.py [--learners 300] [--quiz ID]

A real class starts on 127.0.0.1 (hub, configurable-http-proxy, the ``quizzes``
service; loopback only) with N learners.  Each learner gets a hub API token, then
all of them at once: open an attempt, answer every item (immediate feedback),
submit.  Half answer correctly.  Before that, one more learner opens an attempt
alone, twice (a new token's first request, which waits for the hub to check the
token, and the next one, which the service answers from its identity cache).
Printed: those two latencies, p50/p99 latency of the attempt start,
of feedback and of submission; requests per second; the status codes; and the
checks: no 5xx, every accepted submission in the gradebook exactly once with all
its items, nothing else recorded.  Exits 1 if a check fails.  Bounded: the run
stops after ``--timeout`` seconds whatever happens, and the class is always
stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp

from course.classroom.harness import RunningClass, correct_responses
from quizzes.author import load_sources
from quizzes.bank import load_banks


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


async def learner(session: aiohttp.ClientSession, base: str, token: str, name: str,
                  quiz: str, answers: dict[str, object] | None, lat: dict[str, list[float]],
                  codes: Counter[int], accepted: list[str]) -> None:
    headers = {"Authorization": f"token {token}"}

    async def post(kind: str, path: str, body: dict[str, object]) -> tuple[int, dict]:
        t0 = time.perf_counter()
        async with session.post(base + path, json=body, headers=headers) as resp:
            data = await resp.json(content_type=None)
            lat[kind].append(time.perf_counter() - t0)
            codes[resp.status] += 1
            return resp.status, data

    code, att = await post("start", "api/attempts", {"quiz_id": quiz})
    if code != 200:
        return
    for item in att["items"]:
        iid = item["item_id"]
        if answers is not None:
            response = answers[iid]
        else:  # a learner who guesses the first option (or types 1)
            response = item["options"][0][0] if item["options"] else "1"
        await post("feedback", f"api/attempts/{att['attempt_id']}/answers",
                   {"item_id": iid, "response": response})
    code, _ = await post("submit", f"api/attempts/{att['attempt_id']}/submit", {})
    if code == 200:
        accepted.append(att["attempt_id"])


async def run(base: str, tokens: dict[str, str], quiz: str, good: dict[str, dict[str, object]],
              timeout: float) -> tuple[dict[str, list[float]], Counter[int], list[str], float]:
    lat: dict[str, list[float]] = {"start": [], "feedback": [], "submit": []}
    codes: Counter[int] = Counter()
    accepted: list[str] = []
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn,
                                     timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        t0 = time.perf_counter()
        tasks = [learner(session, base, tok, name, quiz, good.get(name), lat, codes, accepted)
                 for name, tok in tokens.items()]
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True),
                                         timeout)
        wall = time.perf_counter() - t0
    for r in results:
        if isinstance(r, BaseException):
            codes[-1] += 1  # a connection error or a timeout
    return lat, codes, accepted, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--learners", type=int, default=300)
    ap.add_argument("--quiz", default="01-what-is-slurm")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole load")
    args = ap.parse_args(argv)
    if args.learners < 1:
        ap.error("--learners must be at least 1")
    banks, sources = load_banks(), load_sources()
    if args.quiz not in banks:
        ap.error(f"unknown quiz {args.quiz}")
    bank = banks[args.quiz]
    names = [f"u{k:04d}" for k in range(args.learners)]
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp, \
            RunningClass(Path(tmp), learners=[*names, "solo"]) as cls:
        t0 = time.perf_counter()
        tokens = {n: cls.token(n) for n in names}
        print(f"class up at {cls.url}: {len(names)} learners, tokens in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        solo = cls.token("solo")
        alone = []
        for _ in range(2):
            t0 = time.perf_counter()
            code, _reply = cls.call("POST", "api/attempts", token=solo,
                                    body={"quiz_id": args.quiz})
            alone.append((time.perf_counter() - t0) * 1000)
            if code != 200:
                print(f"a learner alone: refused {code}: {_reply}")
                return 1
        print(f"a learner alone: first request (the hub checks the new token) "
              f"{alone[0]:.0f} ms, next request {alone[1]:.0f} ms", flush=True)
        good = {n: correct_responses(bank, sources[bank.quiz_id], n, 1)
                for n in names[::2]}
        lat, codes, accepted, wall = asyncio.run(run(cls.service, tokens, args.quiz, good,
                                                     args.timeout))
        db = sqlite3.connect(cls.paths.gradebook.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            once = missing = partial = 0
            for aid in accepted:
                digest = hashlib.sha256(f"exam|{aid}".encode()).hexdigest()
                rows = db.execute("SELECT attempt_id FROM attempts WHERE submission_digest = ?",
                                  (digest,)).fetchall()
                if len(rows) == 1:
                    once += 1
                    n = db.execute("SELECT COUNT(*) FROM item_responses WHERE attempt_id = ?",
                                   (rows[0][0],)).fetchone()[0]
                    partial += n != len(bank.items)
                else:
                    missing += 1
            total = db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
            passed = db.execute("SELECT COUNT(*) FROM scores WHERE passed = 1").fetchone()[0]
        finally:
            db.close()
    requests = sum(len(v) for v in lat.values())
    print(f"{len(names)} learners, quiz {args.quiz} ({len(bank.items)} items), all at once "
          f"through the proxy: {requests} requests in {wall:.1f} s ({requests / wall:.0f}/s)")
    print(f"{'':<10} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}")
    for kind in ("start", "feedback", "submit"):
        v = lat[kind]
        print(f"{kind:<10} {len(v):>6} {pct(v, 0.5):>9.1f} {pct(v, 0.99):>9.1f} "
              f"{max(v, default=0) * 1000:>9.1f}")
    print("status codes:", dict(sorted(codes.items())))
    print(f"accepted submissions {len(accepted)}: in the gradebook exactly once {once}, "
          f"missing or doubled {missing}, partial {partial}; gradebook attempts {total}; "
          f"passed {passed}")
    if lat["feedback"]:
        print(f"feedback p99 / p50 = {pct(lat['feedback'], .99) / pct(lat['feedback'], .5):.1f}x"
              f"; submit p50 / feedback p50 = "
              f"{pct(lat['submit'], .5) / pct(lat['feedback'], .5):.1f}x;"
              f" mean feedback {statistics.mean(lat['feedback']) * 1000:.1f} ms")
    five = sum(c for k, c in codes.items() if k >= 500 or k < 0)
    ok = (five == 0 and len(accepted) == len(names) and once == len(accepted)
          and missing == 0 and partial == 0 and total == len(accepted))
    print("checks:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
