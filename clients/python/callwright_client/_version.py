"""The distribution's version, in one place: the User-Agent and ``callwright_client.__version__`` read it."""

__version__ = "0.1.0"
