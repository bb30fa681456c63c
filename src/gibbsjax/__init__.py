"""gibbsjax: Gibbs samplers as pure JAX functions."""

from gibbsjax.kernel import Kernel, sweep

__all__ = ["Kernel", "sweep"]
__version__ = "0.1.0"
