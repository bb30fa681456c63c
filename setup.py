"""Builds gibbsjax's native CPU kernels (``src/gibbsjax/_native/lda_cpu.cc``) at install time.

The kernels are XLA FFI custom calls: a plain shared library (no Python bindings) compiled against the
XLA FFI headers that ship with jaxlib, loaded at run time with ``ctypes``
(:mod:`gibbsjax.models.lda.native`).  Where it cannot be built (no C++ compiler, no headers), the install
still succeeds and gibbsjax runs its pure-XLA updates, saying so once at run time.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _ffi_include_dir():
    """jaxlib's include folder (what jax.ffi.include_dir() returns), found without importing jax."""
    try:
        import jaxlib
    except ImportError:
        return None
    folder = os.path.join(os.path.dirname(jaxlib.__file__), "include")
    return folder if os.path.isfile(os.path.join(folder, "xla", "ffi", "api", "ffi.h")) else None


class BuildNative(build_ext):
    """build_ext that never fails the install: a kernel that does not build is left out, with a note."""

    def run(self):
        include = _ffi_include_dir()
        if include is None:
            print("gibbsjax: jaxlib's XLA FFI headers were not found; the native CPU kernels are not built "
                  "(gibbsjax runs its pure-XLA updates)", file=sys.stderr)
            return
        for ext in self.extensions:
            ext.include_dirs.append(include)
        try:
            super().run()
        except Exception as err:  # noqa: BLE001 - any build failure leaves the pure-XLA path
            print(f"gibbsjax: the native CPU kernels were not built ({err}); gibbsjax runs its pure-XLA updates",
                  file=sys.stderr)


native = Extension(
    "gibbsjax._native._lda_cpu",
    sources=["src/gibbsjax/_native/lda_cpu.cc"],
    language="c++",
    # -ffp-contract=off: no fused multiply-adds, so every instruction-set clone rounds alike
    extra_compile_args=["-O3", "-std=c++17", "-ffp-contract=off", "-fno-math-errno", "-w"],
    extra_link_args=["-pthread"],
    optional=True,
)

setup(ext_modules=[native] if sys.platform.startswith("linux") or sys.platform == "darwin" else [],
      cmdclass={"build_ext": BuildNative})
