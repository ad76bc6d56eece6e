#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the Spack recipe packaging/spack/spack_repo/cuplan/packages/cuplan/package.py without Spack: its repository
has the namespace cuplan; the recipe parses, defines class Cuplan on CMakePackage and CudaPackage, and declares the
license, the variants cuda (mapped to CUPLAN_ENABLE_CUDA), distributed and blas, a dependency for each CMake dependency, and a cmake_args whose
CUPLAN_* options all exist in the project's CMake files.

    check_spack.py <repo root>
    check_spack.py --self-test
"""
import ast
import pathlib
import re
import sys
import tempfile


def directives(tree, name):
    """The positional string arguments of every call of `name(...)` in the class body."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            found.append([a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)])
    return found


def check(root):
    root = pathlib.Path(root)
    recipe = root / "packaging/spack/spack_repo/cuplan/packages/cuplan/package.py"
    errors = []
    repo_yaml = root / "packaging/spack/spack_repo/cuplan/repo.yaml"
    if not re.search(r"^\s+namespace:\s*cuplan\s*$", repo_yaml.read_text() if repo_yaml.exists() else "", re.M):
        errors.append(f"{repo_yaml}: no repository with namespace cuplan")
    try:
        tree = ast.parse(recipe.read_text(), filename=str(recipe))
    except (OSError, SyntaxError) as error:
        return [f"{recipe}: {error}"]
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Cuplan"]
    if not classes:
        return [f"{recipe}: no class Cuplan"]
    bases = {b.id for b in classes[0].bases if isinstance(b, ast.Name)}
    for base in ("CMakePackage", "CudaPackage"):
        if base not in bases:
            errors.append(f"class Cuplan does not derive from {base}")
    if ["Apache-2.0"] not in directives(tree, "license"):
        errors.append('no license("Apache-2.0")')
    variants = {args[0] for args in directives(tree, "variant") if args}
    for wanted in ("cuda", "distributed", "blas"):
        if wanted not in variants:
            errors.append(f"no variant {wanted!r}")
    depends = " ".join(args[0] for args in directives(tree, "depends_on") if args)
    for wanted in ("cmake@3.25:", "fmt@9:", "fftw", "cuda", "nccl", "openblas"):
        if wanted not in depends:
            errors.append(f"no depends_on for {wanted!r}")
    # The variant cuda is the CMake option CUPLAN_ENABLE_CUDA (~cuda: the CPU-only library).
    mapped = {tuple(a.value for a in node.args if isinstance(a, ast.Constant))
              for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "define_from_variant"}
    if ("CUPLAN_ENABLE_CUDA", "cuda") not in mapped:
        errors.append('cmake_args does not map the variant cuda to CUPLAN_ENABLE_CUDA')
    methods = {n.name for n in classes[0].body if isinstance(n, ast.FunctionDef)}
    if "cmake_args" not in methods:
        errors.append("no cmake_args")
    # Every CUPLAN_* option the recipe sets exists in the project's CMake files.
    cmake_text = "".join(p.read_text() for p in [root / "CMakeLists.txt", *sorted((root / "cmake").glob("*.cmake"))])
    for option in set(re.findall(r'"(CUPLAN_[A-Z_]+)"', recipe.read_text())):
        if option not in cmake_text:
            errors.append(f"cmake_args sets {option}, which no CMake file of the project defines")
    return errors


def self_test():
    good = pathlib.Path(__file__).resolve().parents[2]
    if check(good):
        print("self-test: the repository's own recipe was refused:", check(good))
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        (scratch / "cmake").mkdir()
        (scratch / "CMakeLists.txt").write_text("option(CUPLAN_BUILD_TESTS)\n")
        recipe_dir = scratch / "packaging/spack/spack_repo/cuplan/packages/cuplan"
        recipe_dir.mkdir(parents=True)
        repo_yaml = good / "packaging/spack/spack_repo/cuplan/repo.yaml"
        (recipe_dir.parent.parent / "repo.yaml").write_text(repo_yaml.read_text())
        text = (good / "packaging/spack/spack_repo/cuplan/packages/cuplan/package.py").read_text()
        cases = {
            "a syntax error": text.replace("def cmake_args(self):", "def cmake_args(self)"),
            "a missing variant": text.replace('variant("distributed"', 'variant("other"'),
            "cuda not mapped to CUPLAN_ENABLE_CUDA": text.replace('"CUPLAN_ENABLE_CUDA", "cuda"', '"CUPLAN_ENABLE_CUDA", "x"'),
            "an option CMake does not know": text,  # this scratch CMakeLists.txt defines only one option
        }
        for what, broken in cases.items():
            (recipe_dir / "package.py").write_text(broken)
            if not check(scratch):
                print(f"self-test: {what} passed")
                return 1
    print("self-test: ok")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = check(sys.argv[1])
    for problem in problems:
        print("FAILED:", problem)
    if not problems:
        print("ok: the Spack recipe parses and declares what the project needs")
    sys.exit(1 if problems else 0)
