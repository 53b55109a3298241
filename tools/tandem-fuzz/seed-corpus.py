#!/usr/bin/env python3
"""Builds the fuzz targets' seed corpora from the tests (docs/testing.md).

IR seeds: every .mlir file under test/, split at `// -----` and at
split-file's `//--- name` markers (sections named *.json are calibration
seeds). Calibration seeds: every .json file under test/ plus those sections.
The regression corpus (test/tools/tandem-fuzz/Inputs/regressions) is added
to both. Writes OUT/ir and OUT/calibration, one file per seed.

  seed-corpus.py SOURCE_DIR OUT_DIR
"""
import hashlib
import os
import re
import sys


def sections(text):
    """(name or None, body) for each split-file section of `text`."""
    parts = re.split(r"^//--- (\S+)\n", text, flags=re.M)
    yield None, parts[0]
    for name, body in zip(parts[1::2], parts[2::2]):
        yield name, body


def write(out_dir, kind, body):
    body = body.strip() + "\n"
    if len(body.strip()) == 0:
        return
    digest = hashlib.sha1(body.encode()).hexdigest()[:16]
    path = os.path.join(out_dir, kind, digest)
    with open(path, "w") as f:
        f.write(body)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1:]
    for kind in ("ir", "calibration"):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
    test_dir = os.path.join(src, "test")
    for root, _, files in os.walk(test_dir):
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith(".json"):
                with open(path, errors="replace") as f:
                    write(out, "calibration", f.read())
                continue
            if not name.endswith(".mlir"):
                continue
            with open(path, errors="replace") as f:
                text = f.read()
            for section, body in sections(text):
                kind = ("calibration" if section and section.endswith(".json")
                        else "ir")
                if kind == "ir":
                    for case in re.split(r"^// -----\s*$", body, flags=re.M):
                        write(out, "ir", case)
                else:
                    write(out, kind, body)
    counts = {k: len(os.listdir(os.path.join(out, k)))
              for k in ("ir", "calibration")}
    print("seed corpus: %d IR inputs, %d calibration inputs in %s"
          % (counts["ir"], counts["calibration"], out))


if __name__ == "__main__":
    main()
