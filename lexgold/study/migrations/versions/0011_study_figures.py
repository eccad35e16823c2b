"""Study figures computed off the raters' requests (admin view, recruitment)

The admin view showed figures computed inside the request (the whole export and the exclusion
rules, twice per page), and a rater completing a tranche's last slot ran the recruitment top-up
in its own request. A background refresher now computes them when the answers change and keeps
them in this one-row table, shared by every server process and host.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'study_figures',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('version', sa.String(length=200), nullable=False),
        sa.Column('computed_at', sa.DateTime(), nullable=False),
        sa.Column('figures', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )


def downgrade():
    op.drop_table('study_figures')
