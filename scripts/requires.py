#!/usr/bin/env python3
"""Reads the [requires] table of example suites: what each needs from Debian's packages, what it builds that
Debian lacks, and the commands that prove each piece really loads. scripts/setup-examples.sh is its one user.

    python3 scripts/requires.py packages [SUITE.toml …]   # the union of the packages, one a line
    python3 scripts/requires.py build    [SUITE.toml …]   # SUITE<TAB>COMMAND, one build step a line
    python3 scripts/requires.py check    [SUITE.toml …]   # SUITE<TAB>COMMAND, one check a line

With no suite named, every examples/*.toml is read. Commands run from the suite file's folder.
"""
import pathlib
import sys
import tomllib

KINDS = ("packages", "build", "check")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in KINDS:
        print(f"requires.py: say what to list: {' | '.join(KINDS)}, then the suites (default: examples/*.toml)",
              file=sys.stderr)
        return 2
    kind, names = argv[0], argv[1:]
    root = pathlib.Path(__file__).resolve().parent.parent
    suites = [pathlib.Path(n) for n in names] or sorted((root / "examples").glob("*.toml"))
    seen: list[str] = []
    for suite in suites:
        try:
            requires = tomllib.loads(suite.read_text()).get("requires", {})
        except (OSError, tomllib.TOMLDecodeError) as e:
            print(f"requires.py: {suite}: {e}", file=sys.stderr)
            return 2
        for item in requires.get(kind, []):
            if kind == "packages":
                if item not in seen:
                    seen.append(item)
                    print(item)
            else:
                print(f"{suite}\t{item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
