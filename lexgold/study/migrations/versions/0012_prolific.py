"""What lexgold did on Prolific for the study (``lexgold prolific review|bonus --apply``)

One row per action taken on Prolific's API: an approval, a rejection or a return request of a
submission, or a participant's bonus of one bonus batch. ``key`` is unique, so that no action is
ever taken twice, even by two commands run at once.

Revision ID: 0012_prolific
Revises: 0011
Create Date: 2026-11-24
"""
import sqlalchemy as sa
from alembic import op

revision = '0012_prolific'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'prolific_action',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=300), nullable=False),
        sa.Column('prolific_study', sa.String(length=100), nullable=False),
        sa.Column('submission_id', sa.String(length=100), nullable=False),
        sa.Column('participant_id', sa.String(length=100), nullable=False),
        sa.Column('action', sa.String(length=20), nullable=False),
        sa.Column('detail', sa.String(length=500), nullable=False),
        sa.Column('amount_cents', sa.Integer(), nullable=True),
        sa.Column('bulk_id', sa.String(length=100), nullable=False),
        sa.Column('state', sa.String(length=20), nullable=False),
        sa.Column('error', sa.String(length=500), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('done_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('key'),
    )


def downgrade():
    op.drop_table('prolific_action')
