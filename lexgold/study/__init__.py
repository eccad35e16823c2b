"""A rating study without its site: the ``[study]`` configuration, the tranche and Best-Worst
tuple designs, the database (schema, Alembic migrations, engines), the store that creates a
study and the export that reads its ratings back, and the ``lexgold study`` commands
but ``rehearse``, the site's (:mod:`lexgold.study.cli`; docs/annotate.md, docs/contract.md)."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "StudyConfig": "config",
    "load_study_config": "config",
    "Design": "design",
    "design_study": "design",
    "BwsDesign": "bws",
    "design_bws": "bws",
    "read_study_pairs": "pairs",
    "open_study": "db",
    "database_url": "db",
    "make_engine": "db",
    "session_factory": "db",
    "upgrade": "db",
    "backup_study": "db",
    "create_study": "store",
    "confirm_raters": "store",
    "progress": "store",
    "export_ratings": "export",
    "export_chunks": "export",
    "write_export": "export",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
