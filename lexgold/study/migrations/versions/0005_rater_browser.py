"""Raters bound to the browser that enrolled them (hash of a secret in its session)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    # plain ALTER TABLE (no batch copy: the rater table is referenced by foreign keys)
    op.add_column('rater', sa.Column('browser_sha256', sa.String(length=64), nullable=False,
                                     server_default=''))
    op.add_column('rater', sa.Column('browsers', sa.Integer(), nullable=False,
                                     server_default='1'))


def downgrade():
    for column in ('browsers', 'browser_sha256'):     # SQLite >= 3.35 and PostgreSQL
        op.execute(f'ALTER TABLE rater DROP COLUMN {column}')
