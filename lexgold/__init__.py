"""lexgold: build word-pair gold standards for lexical semantics.

Recreates the SimLex-999 (Hill et al. 2015), HyperLex (Vulic et al. 2017) and TR9856
(Levy et al. 2015) protocols: candidate sampling, crowd rating, agreement and release.
"""

__version__ = "0.1.0"


def lazy_api(package: str, homes: dict[str, str]):
    """``__getattr__`` and ``__dir__`` of a package whose Python API (``__all__``) lives in its
    modules: each name is imported from ``package.<homes[name]>`` on first use (PEP 562), so
    that importing the package, or one command-line module of it, stays cheap."""
    from importlib import import_module

    def __getattr__(name):
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{homes[name]}"), name)
        setattr(import_module(package), name, value)
        return value

    def __dir__():
        return sorted(set(import_module(package).__dict__) | set(homes))

    return __getattr__, __dir__
