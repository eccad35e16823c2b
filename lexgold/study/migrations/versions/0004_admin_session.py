"""Server-side admin sessions: revoked at logout and when the admin password changes

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'admin_session',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('token_sha256', sa.String(length=64), nullable=False),
        sa.Column('password_sha256', sa.String(length=64), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_sha256'))


def downgrade():
    op.drop_table('admin_session')
