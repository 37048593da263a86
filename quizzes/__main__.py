"""``python -m quizzes`` / the ``quizzes`` console script."""

from __future__ import annotations

import sys

from quizzes.cli import main as _main


def main() -> int:
    """Console-script entry point (``quizzes = "quizzes.__main__:main"``)."""
    return _main()


if __name__ == "__main__":
    sys.exit(main())
