"""Answers timed by the server: milliseconds per item from the page being given to its answers

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    # plain ALTER TABLE, as in 0005 (no batch copy of the answer tables)
    for table in ('answer', 'checkpoint_answer'):
        op.add_column(table, sa.Column('server_ms', sa.Integer(), nullable=True))


def downgrade():
    for table in ('checkpoint_answer', 'answer'):       # SQLite >= 3.35 and PostgreSQL
        op.execute(f'ALTER TABLE {table} DROP COLUMN server_ms')
