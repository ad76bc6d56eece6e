#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every repository path a documentation page names exists.

   check_paths.py REPO_ROOT     one line per path that does not exist (page:line: path); exit 1 if there is one
   check_paths.py --self-test   plants a wrong path in a scratch tree and expects it to be found

The pages: README.md and every docs/**/*.md (CHANGELOG.md records history, with the paths of its time). A path is
a relative link target ([text](target), resolved from the page's folder; anchors and web links are not paths), or
a word that starts with a top-level folder of the repository (src/, include/, tests/, samples/, bench/, scripts/,
docs/, cmake/, packaging/, .ci/), in code spans and prose alike: `src/plan/staging/copy.cpp`,
src/matmul/routes/staging_plan.{hpp,cpp} (each alternative). A word with a placeholder (<name>, *, ...) names no
single path and is passed over; a word without an extension may name the program built from a source of that name
(`bench/fft_callback_bench`: bench/fft_callback_bench.cu).
"""
import os
import re
import sys
import tempfile

TOP_FOLDERS = ("src", "include", "tests", "samples", "bench", "scripts", "docs", "cmake", "packaging", ".ci")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
WORD = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(f) for f in TOP_FOLDERS) + r")/[\w./{},+<>*-]*)")
# A program the build makes is named by its path without an extension (`bench/fft_callback_bench`): its source.
PROGRAM_SOURCES = (".cpp", ".cu")
PLACEHOLDER = re.compile(r"[<>*]|\.\.\.")


def pages(root):
    if os.path.isfile(os.path.join(root, "README.md")):
        yield "README.md"
    for folder, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(folder, name), root)


def expand(word):
    """src/a.{hpp,cpp} -> src/a.hpp, src/a.cpp (one brace group, as the pages write them)."""
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    return [word[: m.start()] + alt + word[m.end():] for alt in m.group(1).split(",")]


def paths_of(line):
    """(path, relative_to_page) for each path the line names."""
    found = []
    for m in LINK.finditer(line):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a web link, mailto:, or an anchor of the page itself
        found.append((target.split("#", 1)[0], True))
    # Link targets are checked as links, not again as words.
    for m in WORD.finditer(LINK.sub("", line)):
        word = m.group(1).rstrip(".,;:")
        if PLACEHOLDER.search(word) or word.endswith("/.") or "{" in word and "}" not in word:
            continue
        found.extend((w, False) for w in expand(word))
    return found


def check(root):
    missing = []
    for page in pages(root):
        with open(os.path.join(root, page), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for path, relative in paths_of(line):
                    base = os.path.dirname(page) if relative else ""
                    full = os.path.normpath(os.path.join(root, base, path))
                    program = not relative and "." not in os.path.basename(full)
                    if not os.path.exists(full) and not (program and any(
                            os.path.isfile(full + ext) for ext in PROGRAM_SOURCES)):
                        missing.append(f"{page}:{number}: {path}")
    return missing


def report(root):
    missing = check(root)
    if missing:
        print(f"FAILED: {len(missing)} path(s) named by the documentation do not exist in {root}:")
        for m in missing:
            print("  " + m)
        return 1
    print(f"ok: every repository path named by README.md and docs/ exists in {root}")
    return 0


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "dev"))
        os.makedirs(os.path.join(root, "src", "plan", "staging"))
        for p in ("src/plan/staging/copy.cpp", "src/plan/staging/copy.hpp", "docs/fft.md",
                  "src/plan/staging/copy_bench.cu"):
            open(os.path.join(root, p), "w").close()
        good = ("# Page\n`src/plan/staging/copy.cpp` and src/plan/staging/copy.{hpp,cpp}; see [FFT](../fft.md),\n"
                "[web](https://example.org/src/none.cpp), [here](#page), `src/<operation>/routes/`, src/plan/.\n"
                "`samples/fft_*` and the program `src/plan/staging/copy_bench --reps 3`\n")
        with open(os.path.join(root, "docs", "dev", "page.md"), "w") as f:
            f.write(good)
        if check(root):
            print("self-test FAILED: a page naming only existing paths was refused:", check(root))
            return 1
        planted = {"`src/plan/copy.cpp` moved": "src/plan/copy.cpp", "[gone](../missing.md)": "../missing.md",
                   "src/plan/staging/copy.{hpp,cu}": "src/plan/staging/copy.cu",
                   "`bench/matmul_host_cost_bench`": "bench/matmul_host_cost_bench"}
        for text, path in planted.items():
            with open(os.path.join(root, "docs", "dev", "page.md"), "w") as f:
                f.write(good + text + "\n")
            missing = check(root)
            if missing != [f"docs/dev/page.md:5: {path}"]:
                print(f"self-test FAILED: planted {text!r}: expected exactly {path} found, got {missing}")
                return 1
    print("self-test passed: every planted wrong path was found, and no existing one")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit("usage: check_paths.py REPO_ROOT | --self-test")
    sys.exit(report(sys.argv[1]))
