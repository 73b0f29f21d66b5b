"""A scripted SFT teacher for `kforge data sft`: answers from a suite's own solutions.

Per problem, in arrival order: the solution with a line of reasoning, the same code in other words
(a duplicate), the solution with a `subprocess` call (rejected by the static rules) and prose without
code. A problem's samples arrive in parallel, so a sample's index does not say which reply it got;
the set of replies per problem is fixed. Problems named in `down` get an HTTP error instead."""

from __future__ import annotations

import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from scripted_chat_endpoint import Reply

PROBLEM_NAME = re.compile(r"reference implementation, `([^`]+)`")
REPLIES_PER_PROBLEM = 4


class SuiteTeacher:
    def __init__(self, suite: Path, down: frozenset[str] = frozenset(), down_status: int = 401) -> None:
        self.suite = suite
        self.down = down
        self.down_status = down_status  # 401 is not retried, so a test does not wait for backoffs
        self.lock = threading.Lock()
        self.turns: Counter[str] = Counter()

    def __call__(self, index: int, body: dict[str, Any]) -> Reply:
        found = PROBLEM_NAME.search(str(body["messages"][-1]["content"]))
        if found is None or not (self.suite / found.group(1) / "solution.py").is_file():
            return "I do not know this problem."
        name = found.group(1)
        if name in self.down:
            return self.down_status
        with self.lock:
            turn = self.turns[name]
            self.turns[name] += 1
        solution = (self.suite / name / "solution.py").read_text()
        risky = "import subprocess\n" + solution.replace(
            "class ModelNew", "_probe = subprocess.run\n\n\nclass ModelNew", 1
        )
        replies = [
            f"One program per block of elements; fp32 math.\n\n```python\n{solution}```\n",
            f"Same kernel, explained differently.\n\n```python\n{solution}```\n",
            f"With a device check first.\n\n```python\n{risky}```\n",
            "I cannot write this kernel.",
        ]
        return replies[turn % REPLIES_PER_PROBLEM]
