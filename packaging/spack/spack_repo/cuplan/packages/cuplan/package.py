# SPDX-License-Identifier: Apache-2.0
# Spack recipe for cuplan (Spack 1.x package layout). Use it from a repository of your own:
#
#   spack repo add packaging/spack/spack_repo/cuplan   # once, from a clone of cuplan
#   spack install cuplan cuda_arch=90                  # or cuda_arch=80,90; +distributed for the NCCL component
#   spack install cuplan~cuda                          # the CPU-only library: no CUDA toolkit (CUPLAN_ENABLE_CUDA=OFF)
#
# tests/packaging/check_spack.py checks this file in the test suite (it parses it and reads its directives).

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class Cuplan(CMakePackage, CudaPackage):
    """GPU FFT (cuFFT) and matrix products (cuBLASLt) as plan/execute objects with explicit stream semantics,
    with the same calls on the CPU (FFTW and a BLAS library) on a machine without a GPU."""

    license("Apache-2.0")

    version("main", branch="main")

    # CudaPackage's variant "cuda" is CMake's CUPLAN_ENABLE_CUDA: ~cuda builds the CPU-only library (FFTW and the
    # BLAS below, no CUDA toolkit to build, link or use).
    variant("cuda", default=True, description="Build the CUDA backends (cuFFT, cuBLASLt); ~cuda: CPU-only library")
    conflicts("cuda_arch=none", when="+cuda", msg="set cuda_arch, e.g. cuda_arch=90 (H100/H200) or 80 (A100)")

    variant("distributed", default=False, description="Distributed FFT component over NCCL (cuplan::distributed)")
    conflicts("+distributed", when="~cuda", msg="the distributed component needs CUDA and NCCL")
    # The BLAS of the CPU matrix products (CMake's CUPLAN_BLAS_VENDOR).
    variant("blas", default="openblas", values=("openblas", "mkl", "blis"), multi=False,
            description="BLAS of the CPU backend")

    generator("ninja")

    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    depends_on("cuda@12:", when="+cuda")
    depends_on("nccl", when="+distributed")
    depends_on("fmt@9:")
    depends_on("fftw@3 precision=float,double")
    depends_on("openblas threads=pthreads", when="blas=openblas")
    depends_on("intel-oneapi-mkl threads=openmp", when="blas=mkl")
    depends_on("blis threads=pthreads cblas=True", when="blas=blis")
    depends_on("googletest", type="test")
    depends_on("doxygen", type="test")

    conflicts("%gcc@:11", msg="cuplan needs C++20 (GCC 12 or newer)")

    blas_vendors = {"openblas": "OpenBLAS", "mkl": "MKL", "blis": "BLIS"}

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("CUPLAN_BUILD_TESTS", self.run_tests),
            self.define("CUPLAN_BUILD_SAMPLES", False),
            self.define("CUPLAN_BUILD_BENCHMARKS", False),
            self.define("CUPLAN_INSTALL", True),
            self.define_from_variant("CUPLAN_ENABLE_CUDA", "cuda"),
            self.define_from_variant("CUPLAN_BUILD_DISTRIBUTED", "distributed"),
            self.define("CUPLAN_BLAS_VENDOR", self.blas_vendors[spec.variants["blas"].value]),
        ]
        if spec.satisfies("+cuda"):
            archs = spec.variants["cuda_arch"].value
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(f"{a}-real" for a in archs)))
            args.append(self.define("CUDAToolkit_ROOT", spec["cuda"].prefix))
        return args
