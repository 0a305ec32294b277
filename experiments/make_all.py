"""The main job: regenerate every result, figure and number of the paper."""

from __future__ import annotations


def main() -> int:
    print("multiverse: nothing to regenerate yet")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
