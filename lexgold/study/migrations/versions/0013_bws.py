"""Best-Worst Scaling studies (issue 27): the design tuple of an item, the least pair of a check tuple

Revision ID: 0013_bws
Revises: 0012_prolific
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa


revision = '0013_bws'
down_revision = '0012_prolific'
branch_labels = None
depends_on = None


def upgrade():
    # plain ALTER TABLE, as in 0009 (nullable columns: slider studies keep NULL)
    op.add_column('item', sa.Column('tuple_id', sa.Integer(), nullable=True))
    op.add_column('checkpoint_answer', sa.Column('worst', sa.Integer(), nullable=True))


def downgrade():
    op.execute('ALTER TABLE checkpoint_answer DROP COLUMN worst')   # SQLite >= 3.35, PostgreSQL
    op.execute('ALTER TABLE item DROP COLUMN tuple_id')
