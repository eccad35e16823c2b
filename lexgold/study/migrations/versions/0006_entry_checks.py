"""Who may enter and what the researcher must check: accepted entries, per-page timing flags,
platform IDs confirmed against the platform's participant list

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    # plain ALTER TABLE (no batch copy: these tables are referenced by foreign keys)
    op.add_column('study', sa.Column('entries', sa.JSON(), nullable=True))
    op.add_column('slot', sa.Column('step_at', sa.DateTime(), nullable=True))
    op.add_column('rater', sa.Column('fast_pages', sa.Integer(), nullable=False,
                                     server_default='0'))
    op.add_column('rater', sa.Column('confirmed', sa.Boolean(), nullable=False,
                                     server_default=sa.false()))


def downgrade():
    for table, column in (('rater', 'confirmed'), ('rater', 'fast_pages'), ('slot', 'step_at'),
                          ('study', 'entries')):          # SQLite >= 3.35 and PostgreSQL
        op.execute(f'ALTER TABLE {table} DROP COLUMN {column}')
