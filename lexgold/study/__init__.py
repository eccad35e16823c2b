"""A rating study without its site: the ``[study]`` configuration, the tranche and Best-Worst
tuple designs, the database (schema, Alembic migrations, engines), the store that creates a
study and the export that reads its ratings back (docs/annotate.md, docs/contract.md)."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "StudyConfig": "lexgold.study.config",
    "load_study_config": "lexgold.study.config",
    "Design": "lexgold.study.design",
    "design_study": "lexgold.study.design",
    "BwsDesign": "lexgold.study.bws",
    "design_bws": "lexgold.study.bws",
    "read_study_pairs": "lexgold.study.pairs",
    "open_study": "lexgold.study.db",
    "database_url": "lexgold.study.db",
    "make_engine": "lexgold.study.db",
    "session_factory": "lexgold.study.db",
    "upgrade": "lexgold.study.db",
    "backup_study": "lexgold.study.db",
    "create_study": "lexgold.study.store",
    "confirm_raters": "lexgold.study.store",
    "progress": "lexgold.study.store",
    "export_ratings": "lexgold.study.export",
    "export_chunks": "lexgold.study.export",
    "write_export": "lexgold.study.export",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
