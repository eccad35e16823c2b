"""Throttle counters shared by every server process: admin lock-out, rate limits

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'throttle',
        sa.Column('key', sa.String(length=200), nullable=False),
        sa.Column('window_start', sa.DateTime(), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('key'))


def downgrade():
    op.drop_table('throttle')
