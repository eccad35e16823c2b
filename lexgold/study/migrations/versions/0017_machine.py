"""A machine rater in a study (issue 45): the ``machine`` table (model, mode, provenance, pairs
covered) and each pair's ``machine_score`` (``lexgold study create --machine FILE``).

Revision ID: 0017_machine
Revises: 0016_preview_links
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0017_machine'
down_revision = '0016_preview_links'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'machine',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('mode', sa.String(length=20), nullable=False),
        sa.Column('model', sa.String(length=300), nullable=True),
        sa.Column('column', sa.String(length=300), nullable=False),
        sa.Column('provenance', sa.JSON(), nullable=False),
        sa.Column('pairs_covered', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'))
    # ALTER TABLE in place, never a batch copy: item's foreign key refers to the pair table
    with op.batch_alter_table('pair', recreate='never') as batch:
        batch.add_column(sa.Column('machine_score', sa.Float(), nullable=True))


def downgrade():
    # ALTER TABLE ... DROP COLUMN (SQLite >= 3.35, PostgreSQL), not a copy, as in upgrade
    with op.batch_alter_table('pair', recreate='never') as batch:
        batch.drop_column('machine_score')
    op.drop_table('machine')
