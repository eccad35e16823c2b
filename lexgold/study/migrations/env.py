"""Alembic environment for lexgold rating studies (run through lexgold.study.db)."""

from alembic import context
from sqlalchemy import create_engine

from lexgold.study.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online():
    connection = config.attributes.get("connection")
    if connection is None:
        engine = create_engine(config.get_main_option("sqlalchemy.url"))
        with engine.begin() as connection:
            _run(connection)
    else:
        _run(connection)


def _run(connection):
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
