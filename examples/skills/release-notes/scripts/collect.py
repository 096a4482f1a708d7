#!/usr/bin/env python3
"""Prints commit subjects since a tag, one per line."""
import argparse
import subprocess


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--since", default="")
    args = parser.parse_args()
    rev = f"{args.since}..HEAD" if args.since else "HEAD"
    out = subprocess.run(["git", "log", "--format=%s", rev], capture_output=True, text=True, check=False)
    print(out.stdout)


if __name__ == "__main__":
    main()
