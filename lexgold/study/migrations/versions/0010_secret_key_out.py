"""The session-signing key leaves the study database (kept in a key file or the environment)

A copy of the database was enough to sign any rater's session; ``lexgold serve`` now reads the
key from ``--secret-key-file``, ``LEXGOLD_SECRET_KEY`` or the key file next to a SQLite study
(``lexgold study secret STUDY``). The stored key is dropped: sessions signed with it end.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""
import secrets

from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('study') as batch:
        batch.drop_column('secret_key')


def downgrade():
    with op.batch_alter_table('study') as batch:
        batch.add_column(sa.Column('secret_key', sa.String(length=128), nullable=True))
    op.get_bind().execute(sa.text('UPDATE study SET secret_key = :key'),
                          {'key': secrets.token_hex(32)})
    with op.batch_alter_table('study') as batch:
        batch.alter_column('secret_key', existing_type=sa.String(length=128), nullable=False)
