"""kforge: verified evaluation of Triton kernels (Python side: worker runtimes)."""

__version__ = "0.1.0"
