"""The study's language pack, so that every later step reads the study's own language and norms

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('study', sa.Column('pack', sa.JSON(), nullable=True))


def downgrade():
    op.execute('ALTER TABLE study DROP COLUMN pack')      # SQLite >= 3.35 and PostgreSQL
