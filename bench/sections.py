"""The benchmark scripts' shared way of writing their figures: bench/report.md and
docs/performance.md hold a section per script between its own markers (`<!-- NAME:start -->` …
`<!-- NAME:end -->`), which a run replaces, keeping everything else."""

import re
from pathlib import Path


def replace(path, name, text, heading=None, required=False):
    """Puts `text` between NAME's markers in `path`. Where they are missing: stops if
    `required`, else appends them at the end (after `heading`, if given)."""
    path = Path(path)
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    old = path.read_text() if path.exists() else ""
    if start in old and end in old:
        head, rest = old.split(start, 1)
        tail = rest.split(end, 1)[1]
    elif required:
        raise SystemExit(f"bench: {path} has no {start} … {end} markers")
    else:
        head = (old.rstrip("\n") + "\n\n" if old.strip() else "") + (f"{heading}\n\n" if heading else "")
        tail = "\n"
    path.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def with_the_rest(path, text):
    """`text`, the head of the report that bench/bench.py writes whole, then everything `path`
    holds from the first script's section on: the other scripts' sections and the notes after
    them."""
    old = Path(path).read_text() if Path(path).exists() else ""
    found = re.search(r"<!-- [\w-]+:start -->", old)
    return f"{text.rstrip()}\n\n{old[found.start():]}" if found else text
