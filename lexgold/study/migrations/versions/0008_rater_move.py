"""A one-time link from the admin view that moves a rater to a new browser (hash and expiry)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    # plain ALTER TABLE (no batch copy: the rater table is referenced by foreign keys)
    op.add_column('rater', sa.Column('move_sha256', sa.String(length=64), nullable=False,
                                     server_default=''))
    op.add_column('rater', sa.Column('move_expires_at', sa.DateTime(), nullable=True))


def downgrade():
    for column in ('move_expires_at', 'move_sha256'):   # SQLite >= 3.35 and PostgreSQL
        op.execute(f'ALTER TABLE rater DROP COLUMN {column}')
