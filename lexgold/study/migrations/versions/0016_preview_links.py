"""Shareable preview links: a signed link that shows the study as a rater sees it,
without the admin password and without storing anything; each link has a row, so it expires
and can be revoked (``lexgold study preview-link``, the admin view).

Revision ID: 0016_preview_links
Revises: 0015_intake
Create Date: 2026-11-27
"""
from alembic import op
import sqlalchemy as sa


revision = '0016_preview_links'
down_revision = '0015_intake'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'preview_link',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('revoked_at', sa.DateTime(), nullable=True),
        sa.Column('made_by', sa.String(length=20), nullable=False),
        sa.PrimaryKeyConstraint('id'))


def downgrade():
    op.drop_table('preview_link')
